"""The embedder of a store that embeds text itself (server-side embeddings).

No model runs in memoweave: each text becomes an :class:`EmbedText` that the store embeds
on ``upsert`` and ``search`` (see ``capabilities.embeds_text`` in
:mod:`memoweave.providers.vector_store`).
"""

from __future__ import annotations

from collections.abc import Sequence

from memoweave.providers.checks import check_purpose, check_texts
from memoweave.providers.embedder import Embedder, Purpose
from memoweave.providers.vector_store import EmbedText, VectorStore


class StoreEmbedder(Embedder):
    """Passes texts through to ``store``, which embeds them."""

    def __init__(self, store: VectorStore) -> None:
        self._store = store
        self._dims: int | None = None

    @property
    def dims(self) -> int:
        """The length of the store's vectors (asked once)."""
        if self._dims is None:
            self._dims = self._store.text_dims()
        return self._dims

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        """One :class:`EmbedText` per text, in order."""
        check_purpose(purpose)
        return [EmbedText(text) for text in check_texts(texts)]
