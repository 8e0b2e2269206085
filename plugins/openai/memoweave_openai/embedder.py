"""``OpenAIEmbedder``: the :class:`memoweave.providers.embedder.Embedder` over /embeddings.

- ``dimensions`` is sent only when configured (servers without Matryoshka support reject
  or silently ignore it); ``dims`` is the expected length, never sent.
- Texts go in batches of ``batch_size``; items are re-ordered by the ``index`` the server
  returns, so output order always equals input order.
- Empty strings are sent as a single space (OpenAI rejects ``""``); ``embed([])`` does no I/O.
- Vectors of an unexpected length raise :class:`EmbeddingError` (e.g. a server ignoring
  ``dimensions``); so does every transport or HTTP failure, with the server's message.
- ``aembed`` is the native async twin (the same pipeline, awaited on ``AsyncOpenAI``).
"""

from __future__ import annotations

from typing import Any

from memoweave.errors import EmbeddingError
from memoweave.providers.embedder_support import BatchedRemoteEmbedder, VectorCheck
from memoweave.providers.retry import RetryPolicy
from memoweave.runtime.steps import Steps, call
from memoweave_openai.client import OpenAITransport
from memoweave_openai.config import OpenAIEmbedderConfig
from memoweave_openai.retry import call_openai


class OpenAIEmbedder(BatchedRemoteEmbedder):
    """Embeddings from ``config``'s endpoint (see the module docstring)."""

    service = "OpenAI"

    def __init__(self, config: OpenAIEmbedderConfig, transport: OpenAITransport) -> None:
        self.config = config
        self.endpoint = transport.endpoint
        self._transport = transport
        self._policy = RetryPolicy.from_config(config)
        vectors = VectorCheck(
            config.dimensions or config.dims,
            model=config.model,
            shape_hint="Use a server that returns float vectors (encoding_format='float').",
            mismatch_hint="The server ignored `dimensions` (no Matryoshka support): unset it."
            if config.dimensions is not None
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
    def from_config(cls, config: OpenAIEmbedderConfig) -> OpenAIEmbedder:
        """Build the client (resolving the API key now) and the provider."""
        return cls(config, OpenAITransport(config))

    def _embed_batch(self, batch: list[str]) -> Steps[list[list[float]]]:
        params: dict[str, Any] = {"model": self.config.model, "input": batch}
        if self.config.dimensions is not None:
            params["dimensions"] = self.config.dimensions
        response = yield from call_openai(
            lambda: call(self._transport.embeddings, **params),
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
        numbered = [i for i in indices if isinstance(i, int)]
        if len(numbered) == len(indices):
            if sorted(numbered) != list(range(len(batch))):
                raise EmbeddingError(
                    f"the server returned item indices {indices} for {len(batch)} texts",
                    hint="The server mishandles batches; lower batch_size (e.g. 1).",
                )
            items.sort(key=lambda item: item.index)
        return [self._vectors(item.embedding) for item in items]


__all__ = ["OpenAIEmbedder"]
