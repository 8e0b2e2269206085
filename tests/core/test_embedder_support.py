"""memoweave.providers.embedder_support: input preparation, batching, vector checks."""

from __future__ import annotations

import asyncio

import pytest

from memoweave.errors import EmbeddingError, ValidationError
from memoweave.providers.embedder_support import (
    BatchedRemoteEmbedder,
    VectorCheck,
    embed_in_batches,
    prepare_inputs,
)
from memoweave.runtime.aio import native_async
from memoweave.runtime.steps import Steps, call, run


def test_prepare_inputs_prefixes_by_purpose_and_keeps_empty_positions() -> None:
    kwargs = {"query_prefix": "query: ", "document_prefix": ""}
    assert prepare_inputs(["a", "", "b"], "document", **kwargs) == ["a", " ", "b"]
    assert prepare_inputs(["a", ""], "query", **kwargs) == ["query: a", "query: "]
    assert prepare_inputs([], "query") == []


@pytest.mark.parametrize(
    ("texts", "purpose", "fragment"),
    [
        ("one text", "document", "list of strings"),
        (["ok", 3], "document", r"texts\[1\]"),
        (["ok"], "search", "purpose"),
    ],
)
def test_prepare_inputs_rejects_bad_arguments(texts: object, purpose: str, fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        prepare_inputs(texts, purpose)


def test_embed_in_batches_keeps_order_and_chunk_sizes() -> None:
    chunks: list[list[str]] = []

    def embed_batch(batch: list[str]) -> Steps[list[list[float]]]:
        chunks.append(batch)
        return (yield call(lambda: [[float(len(text))] for text in batch]))

    vectors = run(embed_in_batches(["a", "bb", "ccc", "dddd", "eeeee"], 2, embed_batch))
    assert vectors == [[1.0], [2.0], [3.0], [4.0], [5.0]]
    assert [len(chunk) for chunk in chunks] == [2, 2, 1]


def test_vector_check_learns_dims_then_enforces_them() -> None:
    check = VectorCheck(None, model="m", shape_hint="shape", mismatch_hint="mismatch")
    assert check.dims is None
    assert check([1, 2.5, 3]) == [1.0, 2.5, 3.0] and check.dims == 3
    with pytest.raises(EmbeddingError, match="2-dim vectors, expected 3") as info:
        check([1.0, 2.0])
    assert info.value.hint == "mismatch"
    assert info.value.details == {"got": 2, "expected": 3, "model": "m"}


@pytest.mark.parametrize("raw", [None, [], "0.1,0.2", {"a": 1}])
def test_vector_check_rejects_non_vectors(raw: object) -> None:
    check = VectorCheck(4, model="m", shape_hint="shape", mismatch_hint="mismatch")
    with pytest.raises(EmbeddingError, match="instead of a list of floats") as info:
        check(raw)
    assert info.value.hint == "shape"


def test_vector_check_rejects_nan_and_inf() -> None:
    check = VectorCheck(2, model="m", shape_hint="shape", mismatch_hint="mismatch")
    for raw in ([float("nan"), 1.0], [1.0, float("inf")]):
        with pytest.raises(EmbeddingError, match="NaN or inf"):
            check(raw)


class LengthEmbedder(BatchedRemoteEmbedder):
    """A subclass whose "server" is a function of each text: [len, index in batch]."""

    service = "Length"

    def __init__(self, batch_size: int) -> None:
        self.batches: list[list[str]] = []
        self.closed_transports = 0
        super().__init__(
            VectorCheck(None, model="len", shape_hint="-", mismatch_hint="-"),
            batch_size=batch_size,
            close_transport=self._close_transport_once,
            query_prefix="q: ",
        )

    def _close_transport_once(self) -> None:
        self.closed_transports += 1

    def _embed_batch(self, batch: list[str]) -> Steps[list[list[float]]]:
        self.batches.append(batch)
        raw = yield call(lambda: [[float(len(t)), float(i)] for i, t in enumerate(batch)])
        return [self._vectors(v) for v in raw]


def test_batched_remote_embedder_batches_in_order_and_closes_once() -> None:
    embedder = LengthEmbedder(batch_size=2)
    assert embedder.dims is None and embedder.embed([]) == [] and embedder.batches == []
    vectors = embedder.embed(["a", "bb", "ccc", ""], purpose="query")
    assert [v[0] for v in vectors] == [4.0, 5.0, 6.0, 3.0]  # "q: " prefixed, order kept
    assert embedder.batches == [["q: a", "q: bb"], ["q: ccc", "q: "]] and embedder.dims == 2
    assert native_async(embedder, "embed") is not None
    assert asyncio.run(embedder.aembed(["x", "yy", "zzz"])) == [[1.0, 0.0], [2.0, 1.0], [3.0, 0.0]]
    embedder.close()
    embedder.close()
    assert embedder.closed_transports == 1
    with pytest.raises(EmbeddingError, match="this Length embedder is closed"):
        embedder.embed(["a"])
