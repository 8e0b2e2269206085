"""``OpenAIEmbedder``: the :class:`memoweave.providers.embedder.Embedder` over /embeddings.

- ``dimensions`` is sent only when configured (servers without Matryoshka support reject
  or silently ignore it); ``dims`` is the expected length, never sent.
- Texts go in batches of ``batch_size``; items are re-ordered by the ``index`` the server
  returns, so output order always equals input order.
- Empty strings are sent as a single space (OpenAI rejects ``""``); ``embed([])`` does no I/O.
- Vectors of an unexpected length raise :class:`EmbeddingError` (e.g. a server ignoring
  ``dimensions``); so does every transport or HTTP failure, with the server's message.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

from memoweave.errors import EmbeddingError, ValidationError
from memoweave.providers.embedder import Embedder, Purpose
from memoweave_openai.client import Endpoint, build_client
from memoweave_openai.config import OpenAIEmbedderConfig
from memoweave_openai.retry import RetryPolicy, call_with_retries

PURPOSES = ("document", "query")


class OpenAIEmbedder(Embedder):
    """Embeddings from ``config``'s endpoint (see the module docstring)."""

    def __init__(self, config: OpenAIEmbedderConfig, client: Any, endpoint: Endpoint) -> None:
        self.config = config
        self.endpoint = endpoint
        self._client = client
        self._dims: int | None = config.dimensions or config.dims
        self._policy = RetryPolicy(
            max_retries=config.max_retries,
            backoff=config.retry_backoff,
            max_delay=config.retry_max_delay,
            timeout=config.timeout,
        )
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def from_config(cls, config: OpenAIEmbedderConfig) -> OpenAIEmbedder:
        """Build the client (resolving the API key now) and the provider."""
        client, endpoint = build_client(config)
        return cls(config, client, endpoint)

    @property
    def dims(self) -> int | None:
        """Configured ``dimensions``/``dims``, else discovered by the first call."""
        return self._dims

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        """Embed ``texts`` in order; raise ``EmbeddingError`` on failure."""
        if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
            raise ValidationError(
                f"texts must be a list of strings, got {type(texts).__name__}",
                hint='Wrap a single text in a list: embed(["text"]).',
            )
        bad = [i for i, t in enumerate(texts) if not isinstance(t, str)]
        if bad:
            raise ValidationError(
                f"texts[{bad[0]}] is {type(texts[bad[0]]).__name__}, not str",
                hint="Pass only strings.",
                details={"index": bad[0]},
            )
        if purpose not in PURPOSES:
            raise ValidationError(
                f"purpose must be 'document' or 'query', got {purpose!r}",
                hint="Use purpose='document' for stored texts and 'query' for searches.",
            )
        if not texts:
            return []
        if self._closed:
            raise EmbeddingError("this OpenAI embedder is closed", hint="Create a new provider.")
        prefix = self.config.query_prefix if purpose == "query" else self.config.document_prefix
        inputs = [(prefix + t) or " " for t in texts]
        size = self.config.batch_size
        vectors: list[list[float]] = []
        for start in range(0, len(inputs), size):
            vectors.extend(self._embed_batch(inputs[start : start + size]))
        return vectors

    def close(self) -> None:
        """Close the HTTP client. Idempotent."""
        if not self._closed:
            self._closed = True
            self._client.close()

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        params: dict[str, Any] = {"model": self.config.model, "input": batch}
        if self.config.dimensions is not None:
            params["dimensions"] = self.config.dimensions
        response = call_with_retries(
            lambda: self._client.embeddings.create(**params),
            self._policy,
            EmbeddingError,
            what=f"embedding with model {self.config.model!r}",
            url=self.endpoint.url,
        )
        items = list(getattr(response, "data", None) or [])
        if len(items) != len(batch):
            raise EmbeddingError(
                f"the server returned {len(items)} vectors for {len(batch)} texts",
                hint="The server mishandles batches; lower batch_size (e.g. 1).",
                details={"url": self.endpoint.url, "batch": len(batch)},
            )
        indices = [getattr(item, "index", None) for item in items]
        if all(isinstance(i, int) for i in indices):
            if sorted(indices) != list(range(len(batch))):
                raise EmbeddingError(
                    f"the server returned item indices {indices} for {len(batch)} texts",
                    hint="The server mishandles batches; lower batch_size (e.g. 1).",
                )
            items.sort(key=lambda item: item.index)
        return [self._check_vector(item.embedding) for item in items]

    def _check_vector(self, raw: object) -> list[float]:
        if not isinstance(raw, list) or not raw:
            raise EmbeddingError(
                f"the server returned a {type(raw).__name__} instead of a list of floats",
                hint="Use a server that returns float vectors (encoding_format='float').",
            )
        vector = [float(x) for x in raw]
        if not all(math.isfinite(x) for x in vector):
            raise EmbeddingError("the server returned a vector containing NaN or inf")
        with self._lock:
            if self._dims is None:
                self._dims = len(vector)
        if len(vector) != self._dims:
            sent = self.config.dimensions is not None
            raise EmbeddingError(
                f"the server returned {len(vector)}-dim vectors, expected {self._dims}",
                hint="The server ignored `dimensions` (no Matryoshka support): unset it."
                if sent
                else "Fix config.dims to the model's vector size, or unset it.",
                details={"got": len(vector), "expected": self._dims, "model": self.config.model},
            )
        return vector


__all__ = ["OpenAIEmbedder"]
