"""The reranker contract.

``rerank(query, documents, top_k)`` scores each document's relevance to ``query`` and
returns at most ``top_k`` :class:`RankedDocument` sorted by ``score`` descending (higher is
more relevant; the scale is the provider's own). ``index`` is the document's position in
the input list, so the caller can map results back. ``rerank(q, [], k)`` returns ``[]``.
Failures raise :class:`memoweave.errors.RerankerError`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RankedDocument:
    """One reranked document: its input position, its text and its relevance score."""

    index: int
    text: str
    score: float


class Reranker(ABC):
    """Reorders candidate documents by relevance to a query."""

    @abstractmethod
    def rerank(self, query: str, documents: Sequence[str], top_k: int) -> list[RankedDocument]:
        """Return the ``top_k`` most relevant documents, best first."""

    def close(self) -> None:  # noqa: B027 - optional hook, default does nothing
        """Release models or connections. Idempotent."""
