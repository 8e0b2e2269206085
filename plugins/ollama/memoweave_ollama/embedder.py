"""``OllamaEmbedder``: the :class:`memoweave.providers.embedder.Embedder` over ``/api/embed``.

- Texts go in batches of ``batch_size`` as ``/api/embed``'s ``input`` list; Ollama answers
  in input order, and the count is checked.
- ``truncate`` is always sent (server default is true); ``dimensions`` only when set.
- Empty strings are sent as a single space (some runners reject an empty input); the
  position is kept. ``embed([])`` does no I/O.
- Vectors of an unexpected length, or containing NaN/inf, raise :class:`EmbeddingError`;
  so does every transport or HTTP failure, with the server's message.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

from memoweave.errors import EmbeddingError, ValidationError
from memoweave.providers.embedder import Embedder, Purpose
from memoweave_ollama.client import build_client
from memoweave_ollama.config import OllamaEmbedderConfig
from memoweave_ollama.retry import RetryPolicy, call_with_retries

PURPOSES = ("document", "query")


def validate_texts(texts: object, purpose: object) -> list[str]:
    """``texts`` as a list of str; raise ValidationError for a bare string or non-strings."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise ValidationError(
            f"texts must be a list of strings, got {type(texts).__name__}",
            hint='Wrap a single text in a list: embed(["text"]).',
        )
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValidationError(
                f"texts[{index}] is {type(text).__name__}, not str",
                hint="Pass only strings.",
                details={"index": index},
            )
    if purpose not in PURPOSES:
        raise ValidationError(
            f"purpose must be 'document' or 'query', got {purpose!r}",
            hint="Use purpose='document' for stored texts and 'query' for searches.",
        )
    return list(texts)


class OllamaEmbedder(Embedder):
    """Embeddings from an Ollama model (see the module docstring)."""

    def __init__(self, config: OllamaEmbedderConfig, client: Any, url: str) -> None:
        self.config = config
        self.url = url
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
    def from_config(cls, config: OllamaEmbedderConfig) -> OllamaEmbedder:
        """Resolve the host (config, ``$OLLAMA_HOST``, default) and build the client."""
        client, url = build_client(config)
        return cls(config, client, url)

    @property
    def dims(self) -> int | None:
        """Configured ``dimensions``/``dims``, else discovered by the first call."""
        return self._dims

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        """Embed ``texts`` in order; raise ``EmbeddingError`` on failure."""
        items = validate_texts(texts, purpose)
        if not items:
            return []
        if self._closed:
            raise EmbeddingError("this Ollama embedder is closed", hint="Create a new provider.")
        prefix = self.config.query_prefix if purpose == "query" else self.config.document_prefix
        inputs = [(prefix + text) or " " for text in items]
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
        options: dict[str, Any] = dict(self.config.options)
        if self.config.num_ctx is not None:
            options["num_ctx"] = self.config.num_ctx
        request: dict[str, Any] = {
            "model": self.config.model,
            "input": batch,
            "truncate": self.config.truncate,
        }
        optional = {
            "options": options or None,
            "keep_alive": self.config.keep_alive,
            "dimensions": self.config.dimensions,
        }
        request.update({k: v for k, v in optional.items() if v is not None})
        response = call_with_retries(
            lambda: self._client.embed(**request),
            self._policy,
            EmbeddingError,
            what=f"embedding with model {self.config.model!r}",
            url=self.url,
            model=self.config.model,
        )
        raw = list(getattr(response, "embeddings", None) or [])
        if len(raw) != len(batch):
            raise EmbeddingError(
                f"the server returned {len(raw)} vectors for {len(batch)} texts",
                hint="Is this an embedding model? Try a lower batch_size.",
                details={"url": self.url, "batch": len(batch), "model": self.config.model},
            )
        return [self._check_vector(vector) for vector in raw]

    def _check_vector(self, raw: object) -> list[float]:
        if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)) or not raw:
            raise EmbeddingError(
                f"the server returned a {type(raw).__name__} instead of a list of floats",
                hint="Check that config.model is an embedding model.",
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
                hint="The server ignored `dimensions` (old Ollama or no Matryoshka support)."
                if self.config.dimensions
                else "Fix config.dims to the model's vector size, or unset it.",
                details={"got": len(vector), "expected": self._dims, "model": self.config.model},
            )
        return vector


__all__ = ["OllamaEmbedder", "validate_texts"]
