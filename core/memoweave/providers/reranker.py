"""The reranker contract.

``rerank(query, documents, top_k)`` scores each document's relevance to ``query`` and
returns at most ``top_k`` :class:`RankedDocument` sorted by ``score`` descending (higher is
more relevant; the scale is the provider's own). ``index`` is the document's position in
the input list, so the caller can map results back. ``rerank(q, [], k)`` returns ``[]``.
Failures raise :class:`memoweave.errors.RerankerError`.

``score_pairs(pairs)`` scores (query, document) pairs of different queries at once (the
answer check asks one fact against several variants of the query): each score is the one
``rerank(query, [document], 1)`` gives, in input order. The default asks ``rerank`` once
per pair; a provider that scores pairs in one pass (a cross-encoder's batch) overrides it.

A provider whose score is a probability of relevance in [0, 1] (a cross-encoder's
sigmoid, say) sets :attr:`Reranker.scores_are_probabilities`; search then fuses the score
with the other signals into memoweave's calibrated score instead of returning the
provider's own (see docs/retrieval.md). A provider whose score is a bounded similarity in
[0, 1] that can be weighed like a cosine (a late-interaction model's MaxSim, rescaled) sets
:attr:`Reranker.scores_are_similarities` instead: search then fuses it into the first pass
of the fused top ``late_interaction_top_n`` (docs/retrieval.md, "Late interaction"). At most one of
the two is ``True``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from memoweave.providers.checks import check_pairs
from memoweave.runtime.aio import default_async, to_thread


@dataclass(frozen=True)
class RankedDocument:
    """One reranked document: its input position, its text and its relevance score."""

    index: int
    text: str
    score: float


def ranked(documents: Sequence[str], scores: Sequence[float], top_k: int) -> list[RankedDocument]:
    """The contract's answer from one score per document: the ``top_k`` best, highest score
    first, equal scores in input order."""
    order = sorted(range(len(documents)), key=lambda i: (-scores[i], i))
    return [RankedDocument(index=i, text=documents[i], score=scores[i]) for i in order[:top_k]]


class Reranker(ABC):
    """Reorders candidate documents by relevance to a query."""

    @abstractmethod
    def rerank(self, query: str, documents: Sequence[str], top_k: int) -> list[RankedDocument]:
        """Return the ``top_k`` most relevant documents, best first."""

    @property
    def scores_are_probabilities(self) -> bool:
        """Whether every ``score`` is a probability of relevance in [0, 1] (default:
        ``False``, a scale of the provider's own)."""
        return False

    @property
    def scores_are_similarities(self) -> bool:
        """Whether every ``score`` is a similarity in [0, 1] that search may weigh like the
        dense cosine, as one more first-pass signal (default: ``False``); never ``True``
        together with :attr:`scores_are_probabilities`."""
        return False

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The score of each (query, document) pair, in input order: what
        ``rerank(query, [document], 1)`` gives it; ``[]`` for no pairs."""
        return [self.rerank(query, [doc], 1)[0].score for query, doc in check_pairs(pairs)]

    def close(self) -> None:  # noqa: B027 - optional hook, default does nothing
        """Release models or connections. Idempotent."""

    # -- optional async twins (same contract). The defaults run the sync method in a worker
    # thread; a provider with an async SDK overrides them with native async I/O, which
    # AsyncMemory then awaits (it runs the sync methods of the others in its own bounded
    # executor). See docs/plugins.md.

    @default_async
    async def arerank(
        self, query: str, documents: Sequence[str], top_k: int
    ) -> list[RankedDocument]:
        """Async :meth:`rerank`."""
        return await to_thread(self.rerank, query, documents, top_k)

    @default_async
    async def ascore_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Async :meth:`score_pairs`."""
        return await to_thread(self.score_pairs, pairs)

    @default_async
    async def aclose(self) -> None:
        """Async :meth:`close`."""
        await to_thread(self.close)
