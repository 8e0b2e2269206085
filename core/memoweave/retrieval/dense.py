"""The dense signal: nearest neighbours of the query vector, and the cosine of any memory.

The store's cosine collections score exactly the cosine similarity (the vector store
contract); memories that only another signal found get theirs from their stored vector,
so every candidate's dense score is the same quantity whatever brought it in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

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


def cosine(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Cosine similarity of two vectors (0.0 if either is zero); ``None`` when they cannot
    be compared (different lengths: e.g. a store that embeds the query text itself)."""
    if len(a) != len(b) or not a:
        return None
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return dot / norms if norms > 0 else 0.0
