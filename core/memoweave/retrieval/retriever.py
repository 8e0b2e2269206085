"""The search pipeline: dense and keyword candidates, fused, thresholded, reranked.

- The query is embedded once (purpose ``"query"``); the store returns dense candidates.
- Keyword candidates come from the store's native ``keyword_search`` when it claims one,
  else from the core's BM25 index; a memory found only by its words can be returned.
- Candidates are fused by reciprocal-rank fusion (``retrieval`` config), then
  ``threshold`` applies to the fused score, then the optional reranker reorders the top N.
- ``explain=True`` adds each signal's score and rank to every result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memoweave.filters import FilterNode, evaluate
from memoweave.memory import items as it
from memoweave.memory.scope import Scope
from memoweave.providers.vector_store import SearchHit

if TYPE_CHECKING:
    from memoweave.memory.providers import MemoryProviders


@dataclass
class Candidate:
    """One memory and what each signal said of it."""

    id: str
    payload: dict[str, Any]
    signals: dict[str, dict[str, float]] = field(default_factory=dict)
    score: float = 0.0


class Retriever:
    """Runs searches against one ``Memory``'s providers."""

    def __init__(self, providers: MemoryProviders) -> None:
        self._p = providers

    def search(
        self,
        query: str,
        *,
        scope: Scope,
        node: FilterNode,
        top_k: int,
        threshold: float | None,
        rerank: bool,
        explain: bool,
        statuses: Sequence[str],
    ) -> list[dict[str, Any]]:
        """Ranked mem0-shaped items (with ``score``, and ``explain`` when asked)."""
        settings = self._p.retrieval
        n = max(settings.candidates, top_k)
        vector = self._p.embedder.embed([query], purpose="query")[0]
        candidates: dict[str, Candidate] = {}
        dense = self._p.vector_store.search(vector, top_k=n, filter=node)
        self._collect(candidates, "dense", [(h.id, h.score, h.payload) for h in dense])
        keyword = self._keyword(query, scope=scope, node=node, limit=n, statuses=statuses)
        self._collect(candidates, "keyword", keyword)
        weights = {"dense": settings.dense_weight, "keyword": settings.keyword_weight}
        for cand in candidates.values():
            cand.score = sum(
                weights.get(name, 0.0) / (settings.rrf_k + sig["rank"])
                for name, sig in cand.signals.items()
            )
        ranked = sorted(candidates.values(), key=lambda c: (-c.score, c.id))
        if threshold is not None:
            ranked = [c for c in ranked if c.score >= threshold]
        if rerank and self._p.reranker is not None and ranked:
            ranked = self._rerank(query, ranked[: settings.rerank_top_n])
        return [self._item(c, explain) for c in ranked[:top_k]]

    def related(self, text: str, *, scope: Scope, limit: int) -> list[SearchHit]:
        """Active memories of ``scope`` to show an extraction prompt, without an embedding
        call: those sharing words with ``text`` (BM25), then the most recently added ones
        up to ``limit`` (a contradiction rarely shares words: "moved to Paris" vs "lives
        in Berlin", but it is usually about a recent memory)."""
        if limit <= 0:
            return []
        active = (it.STATUS_ACTIVE,)
        found = self._keyword(text, scope=scope, node=scope.filter(), limit=limit, statuses=active)
        hits = [SearchHit(i, s, p) for i, s, p in found]
        if len(hits) < limit:
            seen = {h.id for h in hits}
            recent = self._p.history.recent_memory_ids(scope.as_dict(), limit * 2)
            for record in self._p.vector_store.get([i for i in recent if i not in seen]):
                if len(hits) >= limit:
                    break
                payload = record.payload
                if payload.get("status") == it.STATUS_ACTIVE and scope.contains(payload):
                    hits.append(SearchHit(record.id, 0.0, payload))
        return hits

    # -- signals ----------------------------------------------------------------------------

    def _keyword(
        self, text: str, *, scope: Scope, node: FilterNode, limit: int, statuses: Sequence[str]
    ) -> list[tuple[str, float, dict[str, Any]]]:
        store = self._p.vector_store
        if self._p.keyword_index is None:
            return [
                (h.id, h.score, h.payload)
                for h in store.keyword_search(text, top_k=limit, filter=node)
            ]
        scored = self._p.keyword_index.search(text, scope, top_k=limit, statuses=statuses)
        if not scored:
            return []
        records = {r.id: r for r in store.get([i for i, _ in scored])}
        return [
            (i, score, records[i].payload)
            for i, score in scored
            if i in records and evaluate(node, records[i].payload)
        ]

    @staticmethod
    def _collect(
        candidates: dict[str, Candidate], signal: str, hits: list[tuple[str, float, dict[str, Any]]]
    ) -> None:
        for rank, (memory_id, score, payload) in enumerate(hits, start=1):
            cand = candidates.setdefault(memory_id, Candidate(memory_id, payload))
            cand.signals[signal] = {"score": float(score), "rank": float(rank)}

    def _rerank(self, query: str, ranked: list[Candidate]) -> list[Candidate]:
        assert self._p.reranker is not None
        texts = [c.payload.get("memory", "") for c in ranked]
        out = self._p.reranker.rerank(query, texts, top_k=len(texts))
        reordered = []
        for doc in out:
            cand = ranked[doc.index]
            cand.signals["rerank"] = {"score": doc.score, "rank": float(len(reordered) + 1)}
            cand.score = doc.score
            reordered.append(cand)
        return reordered

    @staticmethod
    def _item(cand: Candidate, explain: bool) -> dict[str, Any]:
        item = it.to_item(cand.id, cand.payload, score=cand.score)
        if explain:
            item["explain"] = {
                name: {"score": sig["score"], "rank": int(sig["rank"])}
                for name, sig in cand.signals.items()
            }
        return item
