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

from typing import Any

from memoweave.errors import EmbeddingError
from memoweave.providers.embedder_support import BatchedRemoteEmbedder, VectorCheck
from memoweave.providers.retry import RetryPolicy
from memoweave.runtime.steps import Steps, call
from memoweave_ollama.client import OllamaTransport
from memoweave_ollama.config import OllamaEmbedderConfig
from memoweave_ollama.retry import call_ollama


class OllamaEmbedder(BatchedRemoteEmbedder):
    """Embeddings from an Ollama model (see the module docstring)."""

    service = "Ollama"

    def __init__(self, config: OllamaEmbedderConfig, transport: OllamaTransport) -> None:
        self.config = config
        self.url = transport.url
        self._transport = transport
        self._policy = RetryPolicy.from_config(config)
        vectors = VectorCheck(
            config.dimensions or config.dims,
            model=config.model,
            shape_hint="Check that config.model is an embedding model.",
            mismatch_hint="The server ignored `dimensions` (old Ollama or no Matryoshka support)."
            if config.dimensions
            else "Fix config.dims to the model's vector size, or unset it.",
        )
        super().__init__(
            vectors,
            batch_size=config.batch_size,
            close_transport=transport.close,
            query_prefix=config.query_prefix,
            document_prefix=config.document_prefix,
        )

    @classmethod
    def from_config(cls, config: OllamaEmbedderConfig) -> OllamaEmbedder:
        """Resolve the host (config, ``$OLLAMA_HOST``, default) and build the client."""
        return cls(config, OllamaTransport(config))

    def _embed_batch(self, batch: list[str]) -> Steps[list[list[float]]]:
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
        response = yield from call_ollama(
            lambda: call(self._transport.embed, **request),
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
        return [self._vectors(vector) for vector in raw]


__all__ = ["OllamaEmbedder"]
