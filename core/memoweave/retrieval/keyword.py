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


def keyword_hits(
    store: VectorStore,
    index: KeywordIndex | None,
    text: str,
    *,
    scope: ScopeKeys,
    node: FilterNode,
    limit: int,
    statuses: Sequence[str],
    known: Mapping[str, dict[str, Any]] | None = None,
) -> SignalHits:
    """Up to ``limit`` memories matching ``node`` ranked by BM25 for ``text``.

    ``known`` maps ids to payloads another signal already fetched under the same filter
    (the dense hits); only the other ids are read from the store.
    """
    if index is None:
        return [
            (h.id, h.score, h.payload) for h in store.keyword_search(text, top_k=limit, filter=node)
        ]
    scored = index.search(text, scope, top_k=limit, statuses=statuses)
    if not scored:
        return []
    known = known or {}
    fetched = {r.id: r.payload for r in store.get([i for i, _ in scored if i not in known])}
    payloads = {i: p for i, p in fetched.items() if evaluate(node, p)}
    payloads.update(known)
    return [(i, score, payloads[i]) for i, score in scored if i in payloads]
