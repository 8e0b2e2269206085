"""Helpers for embedders that send texts to a server in batches (no I/O of their own).

- :class:`BatchedRemoteEmbedder` is the base of such an embedder (the OpenAI and Ollama
  plugins'): ``embed``/``aembed``/``close``/``aclose``/``dims`` written once over the
  helpers below; a subclass implements the pipeline of one request, ``_embed_batch``.

- :func:`prepare_inputs` validates ``texts``/``purpose`` and applies the purpose prefix;
  empty strings become one space (several servers reject an empty input), so positions
  are kept.
- :func:`embed_in_batches` (a pipeline) splits the inputs into ``batch_size`` chunks and
  concatenates the chunks' vectors, so output order equals input order.
- :class:`VectorCheck` checks every returned vector: a non-empty sequence of finite floats
  whose length equals ``dims`` (learnt from the first vector when not configured).
Every failure of a returned vector is an :class:`EmbeddingError`.
"""

from __future__ import annotations

import math
import threading
from abc import abstractmethod
from collections.abc import Callable, Sequence

from memoweave.errors import EmbeddingError
from memoweave.providers.checks import check_purpose, check_texts
from memoweave.providers.embedder import Embedder, Purpose
from memoweave.runtime.aio import awaitable
from memoweave.runtime.steps import Steps, blocking, call, gather


def prepare_inputs(
    texts: object, purpose: object, *, query_prefix: str = "", document_prefix: str = ""
) -> list[str]:
    """The strings to send for ``texts`` (ValidationError for bad ``texts``/``purpose``)."""
    items = check_texts(texts)
    prefix = query_prefix if check_purpose(purpose) == "query" else document_prefix
    return [(prefix + text) or " " for text in items]


def embed_in_batches(
    inputs: list[str],
    batch_size: int,
    embed_batch: Callable[[list[str]], Steps[list[list[float]]]],
) -> Steps[list[list[float]]]:
    """The pipeline of ``embed_batch`` over consecutive chunks of at most ``batch_size``
    inputs, vectors in input order; the chunks are independent steps (requested one after
    the other by a sync ``embed``, concurrently by its async twin)."""
    chunks = [inputs[start : start + batch_size] for start in range(0, len(inputs), batch_size)]
    vectors = yield gather(*(embed_batch(chunk) for chunk in chunks))
    return [vector for part in vectors for vector in part]


class VectorCheck:
    """Validates vectors returned by a server and learns ``dims`` from the first one.

    ``shape_hint`` is the hint when a vector is not a list of floats, ``mismatch_hint`` the
    hint when its length differs from ``dims``; ``model`` is reported in ``details``.
    Thread-safe.
    """

    def __init__(
        self, dims: int | None, *, model: str, shape_hint: str, mismatch_hint: str
    ) -> None:
        self._dims = dims
        self._model = model
        self._shape_hint = shape_hint
        self._mismatch_hint = mismatch_hint
        self._lock = threading.Lock()

    @property
    def dims(self) -> int | None:
        """The expected vector length (``None`` until the first vector when not configured)."""
        return self._dims

    def __call__(self, raw: object) -> list[float]:
        """``raw`` as a list of floats; EmbeddingError when malformed or of the wrong length."""
        if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)) or not raw:
            raise EmbeddingError(
                f"the server returned a {type(raw).__name__} instead of a list of floats",
                hint=self._shape_hint,
            )
        vector = [float(x) for x in raw]
        if not all(math.isfinite(x) for x in vector):
            raise EmbeddingError("the server returned a vector containing NaN or inf")
        with self._lock:
            if self._dims is None:
                self._dims = len(vector)
        if len(vector) != self._dims:
            raise EmbeddingError(
                f"the server returned {len(vector)}-dim vectors, expected {self._dims}",
                hint=self._mismatch_hint,
                details={"got": len(vector), "expected": self._dims, "model": self._model},
            )
        return vector


class BatchedRemoteEmbedder(Embedder):
    """An embedder over a server: inputs prepared by :func:`prepare_inputs`, sent in
    batches of ``batch_size`` by :func:`embed_in_batches` (one after the other by
    ``embed``, concurrently by the native twin ``aembed``), every vector checked by
    ``vectors``; ``close`` runs ``close_transport`` once. ``service`` names the server in
    errors. A subclass implements :meth:`_embed_batch`."""

    service = "remote"

    def __init__(
        self,
        vectors: VectorCheck,
        *,
        batch_size: int,
        close_transport: Callable[[], None],
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        self._vectors = vectors
        self._batch_size = batch_size
        self._close_transport = close_transport
        self._prefixes = {"query_prefix": query_prefix, "document_prefix": document_prefix}
        self._closed = False

    @property
    def dims(self) -> int | None:
        """Configured ``dimensions``/``dims``, else discovered by the first call."""
        return self._vectors.dims

    @abstractmethod
    def _embed_batch(self, batch: list[str]) -> Steps[list[list[float]]]:
        """The pipeline of one request: one vector per input of ``batch``, in order,
        each passed through ``self._vectors``; ``EmbeddingError`` on failure."""

    def _embed(
        self, texts: Sequence[str], *, purpose: Purpose = "document"
    ) -> Steps[list[list[float]]]:
        """Embed ``texts`` in order; raise ``EmbeddingError`` on failure."""
        inputs = prepare_inputs(texts, purpose, **self._prefixes)
        if not inputs:
            return []
        if self._closed:
            raise EmbeddingError(
                f"this {self.service} embedder is closed", hint="Create a new provider."
            )
        return (yield from embed_in_batches(inputs, self._batch_size, self._embed_batch))

    def _close(self) -> Steps[None]:
        """Close the HTTP clients. Idempotent."""
        if not self._closed:
            self._closed = True
            yield call(self._close_transport)

    embed = blocking(_embed)
    aembed = awaitable(_embed)
    close = blocking(_close)
    aclose = awaitable(_close)


__all__ = ["BatchedRemoteEmbedder", "VectorCheck", "embed_in_batches", "prepare_inputs"]
