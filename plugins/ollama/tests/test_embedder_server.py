"""The ``ollama`` embedder against the protocol server: batching, options, errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memoweave.errors import EmbeddingError, ValidationError
from memoweave.testing import cosine

EMBED_MODEL = "all-minilm"
Serve = Callable[..., Any]
Create = Callable[..., Any]
TEXTS = ["alpha particles", "", "green tea", "日本語のテキスト", "stock markets fell"]


def test_batches_keep_order_and_size(ollama_serve: Serve, ollama_create: Create) -> None:
    server = ollama_serve(chat=False, embed=True)
    small = ollama_create("embedder", host=server.url, model=EMBED_MODEL, batch_size=2)
    batched = small.embed(TEXTS)
    sizes = [len(body["input"]) for body in server.calls("/api/embed")]
    assert sizes == [2, 2, 1]
    assert server.calls("/api/embed")[0]["input"] == ["alpha particles", " "]  # "" kept as " "
    whole = ollama_create("embedder", host=server.url, model=EMBED_MODEL).embed(TEXTS)
    assert len(server.calls("/api/embed")) == 4
    for a, b in zip(batched, whole, strict=True):
        assert cosine(a, b) > 0.999
    assert cosine(batched[0], batched[2]) < 0.99  # distinct texts stay distinct


def test_prefixes_truncate_and_dimensions_are_sent(
    ollama_serve: Serve, ollama_create: Create
) -> None:
    server = ollama_serve(chat=False, embed=True)
    embedder = ollama_create(
        "embedder", host=server.url, model=EMBED_MODEL, dimensions=128, keep_alive=0,
        query_prefix="search_query: ", document_prefix="search_document: ",
    )  # fmt: skip
    assert embedder.dims == 128
    [query] = embedder.embed(["tea"], purpose="query")
    [doc] = embedder.embed(["tea"], purpose="document")
    assert len(query) == len(doc) == 128
    assert abs(sum(x * x for x in query) - 1.0) < 1e-6
    first, second = server.calls("/api/embed")
    assert first["input"] == ["search_query: tea"] and second["input"] == ["search_document: tea"]
    assert first["dimensions"] == 128 and first["truncate"] is True and first["keep_alive"] == 0


def test_truncate_false_makes_long_texts_an_error(
    ollama_serve: Serve, ollama_create: Create
) -> None:
    server = ollama_serve(chat=False, embed=True)
    long_text = "memory " * 700
    strict = ollama_create("embedder", host=server.url, model=EMBED_MODEL, truncate=False)
    with pytest.raises(EmbeddingError, match="exceeds the context length") as info:
        strict.embed([long_text])
    assert info.value.details["status"] == 400
    lenient = ollama_create("embedder", host=server.url, model=EMBED_MODEL)
    assert len(lenient.embed([long_text])[0]) == 384


def test_wrong_dims_in_config_is_an_error(ollama_serve: Serve, ollama_create: Create) -> None:
    server = ollama_serve(chat=False, embed=True)
    embedder = ollama_create("embedder", host=server.url, model=EMBED_MODEL, dims=768)
    with pytest.raises(EmbeddingError, match="384-dim vectors, expected 768"):
        embedder.embed(["hello"])


def test_unknown_model_and_chat_model(ollama_serve: Serve, ollama_create: Create) -> None:
    server = ollama_serve(chat=False, embed=True)
    missing = ollama_create("embedder", host=server.url, model="nomic-embed-text", max_retries=2)
    with pytest.raises(EmbeddingError, match='model "nomic-embed-text" not found') as info:
        missing.embed(["hello"])
    assert "ollama pull nomic-embed-text" in info.value.hint
    assert len(server.calls("/api/embed")) == 1


def test_retries_on_503_then_succeeds(ollama_serve: Serve, ollama_create: Create) -> None:
    server = ollama_serve(chat=False, embed=True)
    server.inject(503, "loading model", times=1)
    embedder = ollama_create("embedder", host=server.url, model=EMBED_MODEL, max_retries=1)
    assert len(embedder.embed(["hello"])[0]) == 384
    assert len(server.calls("/api/embed")) == 2


def test_non_string_items_are_rejected(ollama_create: Create) -> None:
    embedder = ollama_create("embedder", host="127.0.0.1:9", model=EMBED_MODEL)
    with pytest.raises(ValidationError, match=r"texts\[1\]"):
        embedder.embed(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(ValidationError, match="purpose"):
        embedder.embed(["ok"], purpose="search")  # type: ignore[arg-type]
