"""The dense signal: nearest neighbours of the query vector, and the cosine of any memory.

The store's cosine collections score exactly the cosine similarity (the vector store
contract); memories that only another signal found get theirs from their stored vector,
so every candidate's dense score is the same quantity whatever brought it in.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence

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


def query_cosines(
    query: Sequence[float], vectors: Mapping[str, Sequence[float]]
) -> dict[str, float | None]:
    """Cosine similarity of ``query`` and each of ``vectors`` (0.0 if either is zero; the
    query's norm computed once); ``None`` for a vector that cannot be compared with it
    (an empty query or another length: e.g. a store that embeds the query text itself)."""
    if not query:
        return dict.fromkeys(vectors)
    norm, size = _norm(query), len(query)
    return {i: _cosine(query, norm, v) if len(v) == size else None for i, v in vectors.items()}


def _norm(vector: Sequence[float]) -> float:
    return math.sqrt(math.fsum(map(operator.mul, vector, vector)))


def _cosine(a: Sequence[float], norm_a: float, b: Sequence[float]) -> float:
    norms = norm_a * _norm(b)
    return math.fsum(map(operator.mul, a, b)) / norms if norms > 0 else 0.0
