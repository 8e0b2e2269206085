"""The dense signal: nearest neighbours of the query vector in the vector store."""

from __future__ import annotations

from memoweave.filters import FilterNode
from memoweave.providers.vector_store import VectorStore
from memoweave.retrieval.candidates import SignalHits
from memoweave.runtime.steps import Steps, call


def dense_hits(
    store: VectorStore, vector: list[float], node: FilterNode, limit: int
) -> Steps[SignalHits]:
    """The ``limit`` memories most similar to ``vector`` that match ``node``."""
    hits = yield call(store.search, vector, top_k=limit, filter=node)
    return [(h.id, h.score, h.payload) for h in hits]
