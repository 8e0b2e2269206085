"""The existing memories an extraction prompt is shown, found without an embedding call."""

from __future__ import annotations

from memoweave.index.keyword_index import KeywordIndex
from memoweave.memory.history import HistoryStore
from memoweave.memory.payload import STATUS_ACTIVE
from memoweave.memory.scope import Scope
from memoweave.providers.vector_store import STATUS_KEY, SearchHit, VectorStore
from memoweave.retrieval.keyword import keyword_hits
from memoweave.runtime.steps import Steps, call


def related_memories(
    store: VectorStore,
    keyword_index: KeywordIndex | None,
    history: HistoryStore,
    text: str,
    *,
    scope: Scope,
    limit: int,
) -> Steps[list[SearchHit]]:
    """Active memories of ``scope`` sharing words with ``text`` (BM25), then the most
    recently added ones up to ``limit``: a contradiction rarely shares words ("moved to
    Paris" vs "lives in Berlin"), but it is usually about a recent memory."""
    if limit <= 0:
        return []
    found = (
        yield from keyword_hits(
            store,
            keyword_index,
            text,
            scope=scope,
            node=scope.filter(),
            limit=limit,
            statuses=(STATUS_ACTIVE,),
        )
    ).hits
    hits = [SearchHit(i, s, p) for i, s, p in found if p.get(STATUS_KEY) == STATUS_ACTIVE]
    if len(hits) < limit:
        seen = {h.id for h in hits}
        recent = yield call(history.recent_memory_ids, scope.as_dict(), limit * 2)
        wanted = [i for i in recent if i not in seen]
        records = (yield call(store.get, wanted)) if wanted else []
        for record in records:
            if len(hits) >= limit:
                break
            payload = record.payload
            if payload.get(STATUS_KEY) == STATUS_ACTIVE and scope.contains(payload):
                hits.append(SearchHit(record.id, 0.0, payload))
    return hits
