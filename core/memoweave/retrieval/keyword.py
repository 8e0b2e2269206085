"""The keyword signal: BM25 candidates that add recall, not only re-score dense ones.

The core's index (:class:`memoweave.index.keyword_index.KeywordIndex`, SQLite FTS5 over
lemmas and CJK bigrams) is used unless ``retrieval.keyword_source`` hands keyword search
to the store's native ``keyword_search``. Core hits are checked against the full read
filter on the stored payloads, so both sources honour the same filter language.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memoweave.filters import FilterNode, evaluate
from memoweave.index.contracts import ScopeKeys
from memoweave.index.keyword_index import KeywordIndex
from memoweave.providers.vector_store import VectorStore
from memoweave.retrieval.candidates import SignalHits
from memoweave.runtime.steps import Call, Steps, call


def keyword_hits(
    store: VectorStore,
    index: KeywordIndex | None,
    text: str,
    *,
    scope: ScopeKeys,
    node: FilterNode,
    limit: int,
    statuses: Sequence[str],
) -> Steps[SignalHits]:
    """The pipeline of up to ``limit`` memories matching ``node`` ranked by BM25 for
    ``text`` (:func:`keyword_scores` then :func:`keyword_payloads`)."""
    scored = yield keyword_scores(
        store, index, text, scope=scope, node=node, limit=limit, statuses=statuses
    )
    return (yield from keyword_payloads(store, index, scored, node=node))


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
    """The step ranking memories by BM25 for ``text``: the core index's ``(id, score)``
    pairs, or the store's native hits (``SearchHit``, already filtered by ``node``)."""
    if index is None:
        return call(store.keyword_search, text, top_k=limit, filter=node)
    return call(index.search, text, scope, top_k=limit, statuses=statuses)


def keyword_payloads(
    store: VectorStore,
    index: KeywordIndex | None,
    scored: list[Any],
    *,
    node: FilterNode,
    known: Mapping[str, dict[str, Any]] | None = None,
) -> Steps[SignalHits]:
    """The hits of :func:`keyword_scores` with their payloads, those failing ``node`` dropped.

    ``known`` maps ids to payloads another signal already fetched under the same filter
    (the dense hits); only the other ids are read from the store.
    """
    if index is None:
        return [(h.id, h.score, h.payload) for h in scored]
    if not scored:
        return []
    known = known or {}
    missing = [i for i, _ in scored if i not in known]
    records = (yield call(store.get, missing)) if missing else []
    payloads = {r.id: r.payload for r in records if evaluate(node, r.payload)}
    payloads.update(known)
    return [(i, score, payloads[i]) for i, score in scored if i in payloads]
