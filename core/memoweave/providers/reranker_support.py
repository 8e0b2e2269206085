"""The base of a reranker that scores each (query, document) pair on its own: a
cross-encoder, a late-interaction model (no I/O of its own).

:class:`PairScoringReranker` writes the :class:`~memoweave.providers.reranker.Reranker`
contract once over one method, :meth:`PairScoringReranker._scores`: ``rerank`` and
``score_pairs`` validate their input before scoring, hand the same pair to the same
method (so both give it the same score), check one score per pair, refuse to run after
``close`` and turn any failure into one :class:`~memoweave.errors.RerankerError` that
names the model. The onnx and sentence-transformers plugins' rerankers are built on it.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence

from memoweave.errors import MemoweaveError, RerankerError
from memoweave.providers.checks import check_pairs, check_query, check_texts, check_top_k
from memoweave.providers.reranker import RankedDocument, Reranker, ranked


class PairScoringReranker(Reranker):
    """A reranker over a model that scores (query, document) pairs. ``model`` names it in
    errors (a path or a model name, never a credential); ``engine`` is what runs it ("onnxruntime",
    "sentence-transformers"). A subclass implements :meth:`_scores` and may override
    :meth:`_release` to drop its model at ``close``."""

    def __init__(self, *, model: str, engine: str) -> None:
        self._model_label = model
        self._engine = engine
        self._closed = False

    @abstractmethod
    def _scores(self, pairs: list[tuple[str, str]]) -> list[float]:
        """One score per pair of ``pairs`` (validated, not empty), in input order."""

    def rerank(self, query: str, documents: Sequence[str], top_k: int) -> list[RankedDocument]:
        check_query(query)
        docs = check_texts(documents, what="documents")
        check_top_k(top_k)
        if not docs:
            return []
        return ranked(docs, self._checked([(query, doc) for doc in docs]), top_k)

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Every (query, document) pair scored as :meth:`rerank` scores it, in order."""
        checked = check_pairs(pairs)
        return self._checked(checked) if checked else []

    def _checked(self, pairs: list[tuple[str, str]]) -> list[float]:
        """:meth:`_scores` of ``pairs``: refused once closed, one finite float per pair,
        any failure a ``RerankerError``."""
        if self._closed:
            raise RerankerError("the reranker is closed", hint="Create a new one after close().")
        try:
            scores = [float(s) for s in self._scores(pairs)]
        except MemoweaveError:
            raise
        except Exception as exc:
            raise RerankerError(
                f"{self._engine} failed to score {len(pairs)} pairs: {exc}",
                details={"model": self._model_label},
            ) from exc
        if len(scores) != len(pairs) or not all(math.isfinite(s) for s in scores):
            raise RerankerError(
                f"{self._engine} returned {len(scores)} scores for {len(pairs)} pairs, "
                "or a score that is not finite",
                hint="Use a relevance model with a single output score.",
                details={"model": self._model_label},
            )
        return scores

    def _release(self) -> None:
        """Drop the model (called once, by the first :meth:`close`)."""

    def close(self) -> None:
        """Release the model; later calls raise ``RerankerError``. Idempotent."""
        if not self._closed:
            self._closed = True
            self._release()


__all__ = ["PairScoringReranker"]
