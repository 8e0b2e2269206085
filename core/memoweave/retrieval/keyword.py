"""The keyword signal: BM25 candidates that add recall, not only re-score dense ones.

The core's index (:class:`memoweave.index.keyword_index.KeywordIndex`, SQLite FTS5 over
lemmas and CJK bigrams) is used unless ``retrieval.keyword_source`` hands keyword search
to the store's native ``keyword_search``. Core hits are checked against the full read
filter on the stored payloads, so both sources honour the same filter language.

With the core index any memory of the scope that shares a token with the query has a
score (not only the top ``limit``: :func:`keyword_scores_of` gives those of the other
candidates), and the query's ceiling bounds it (see
:class:`memoweave.index.keyword_index.KeywordScores`); a store's native search gives only
its top hits and no ceiling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memoweave.filters import FilterNode, evaluate
from memoweave.index.contracts import ScopeKeys
from memoweave.index.keyword_index import KeywordIndex, KeywordScores
from memoweave.providers.vector_store import SearchHit, VectorStore
from memoweave.retrieval.candidates import SignalHits
from memoweave.runtime.steps import Call, Steps, call


@dataclass
class KeywordResult:
    """``hits``: the top memories matching the filter, with payloads; ``scored``: what
    :func:`keyword_scores` returned (for :func:`keyword_scores_of`); ``ceiling``: the
    query's best possible score (``None`` for a store's native search); ``vectors``:
    stored vectors of the hits another signal had not fetched (when asked for)."""

    hits: SignalHits
    scored: KeywordScores | list[SearchHit]
    ceiling: float | None
    vectors: dict[str, list[float]] = field(default_factory=dict)


def keyword_hits(
    store: VectorStore,
    index: KeywordIndex | None,
    text: str,
    *,
    scope: ScopeKeys,
    node: FilterNode,
    limit: int,
    statuses: Sequence[str],
) -> Steps[KeywordResult]:
    """The pipeline of up to ``limit`` memories matching ``node`` ranked by BM25 for
    ``text`` (:func:`keyword_scores` then :func:`keyword_payloads`)."""
    scored = yield keyword_scores(
        store, index, text, scope=scope, node=node, limit=limit, statuses=statuses
    )
    return (yield from keyword_payloads(store, scored, node=node, limit=limit))


def keyword_scores(
    store: VectorStore,
    index: KeywordIndex | None,
    text: str,
    *,
    scope: ScopeKeys,
    node: FilterNode,
    limit: int,
    statuses: Sequence[str],
) -> Call:
    """The step scoring memories by BM25 for ``text``: the core index's
    :class:`KeywordScores`, or the store's native hits (``SearchHit``, already filtered)."""
    if index is None:
        return call(store.keyword_search, text, top_k=limit, filter=node)
    return call(index.scores, text, scope, statuses=statuses, limit=limit)


def keyword_payloads(
    store: VectorStore,
    scored: KeywordScores | list[SearchHit],
    *,
    node: FilterNode,
    limit: int,
    known: Mapping[str, dict[str, Any]] | None = None,
    with_vectors: bool = False,
) -> Steps[KeywordResult]:
    """The top ``limit`` of :func:`keyword_scores` with their payloads, those failing
    ``node`` dropped.

    ``known`` maps ids to payloads another signal already fetched under the same filter
    (the dense hits); only the other ids are read from the store (with their vectors when
    ``with_vectors``).
    """
    if not isinstance(scored, KeywordScores):
        return KeywordResult([(h.id, h.score, h.payload) for h in scored], scored, None)
    top = scored.hits[:limit]
    known = known or {}
    missing = [i for i, _ in top if i not in known]
    records = (yield call(store.get, missing, with_vectors=with_vectors)) if missing else []
    payloads = {r.id: r.payload for r in records if evaluate(node, r.payload)}
    vectors = {r.id: r.vector for r in records if r.vector is not None and r.id in payloads}
    payloads.update(known)
    hits = [(i, score, payloads[i]) for i, score in top if i in payloads]
    return KeywordResult(hits, scored, scored.ceiling, vectors)


def keyword_scores_of(result: KeywordResult, memory_ids: Sequence[str]) -> Steps[dict[str, float]]:
    """The BM25 of ``memory_ids`` (the search's candidates, ranked by BM25 or not); only
    the ranked hits' for a store's native search."""
    if not isinstance(result.scored, KeywordScores):
        return {h.id: h.score for h in result.scored}
    scores: dict[str, float] = yield call(result.scored.score_of, memory_ids)
    return scores
