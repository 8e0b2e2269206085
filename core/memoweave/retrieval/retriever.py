"""The search pipeline: candidates, re-scoring signals, fusion, threshold, reranking.

1. The query is embedded once (purpose ``"query"``); the store returns the dense
   candidates (:mod:`.dense`).
2. Keyword candidates come from BM25 (:mod:`.keyword`): a memory found only by its words
   can be returned.
3. The entity signal (:mod:`.entities`), the time signal and the optional recency signal
   (:mod:`.temporal`) re-score those candidates.
4. :func:`.fusion.fuse` combines the signals into one score in [0, 1] (weights and method
   in the ``retrieval`` config); ``threshold`` applies to it; the optional reranker then
   reorders the fused top ``rerank_top_n``.
5. ``explain=True`` adds, per result, each signal's raw score, rank and contribution (the
   contributions add up to the fused score; with a reranker, ``rerank`` holds its score
   and rank and the result's ``score`` is the reranker's).

The caller's read filter (scope, status, expiry, metadata) applies to every signal.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memoweave.filters import FilterNode
from memoweave.memory import items as it
from memoweave.memory.scope import Scope
from memoweave.providers.vector_store import STATUS_KEY, SearchHit
from memoweave.retrieval.candidates import Candidate, Signal, collect, rank_scores
from memoweave.retrieval.dense import dense_hits
from memoweave.retrieval.entities import entity_scores
from memoweave.retrieval.fusion import fuse
from memoweave.retrieval.keyword import keyword_hits
from memoweave.retrieval.temporal import recency_score, time_score, time_windows

if TYPE_CHECKING:
    from memoweave.memory.keyword_index import KeywordIndex
    from memoweave.memory.providers import MemoryProviders


class Retriever:
    """Runs searches against one ``Memory``'s providers."""

    def __init__(self, providers: MemoryProviders) -> None:
        self._p = providers

    @property
    def _keyword_index(self) -> KeywordIndex | None:
        return self._p.indexes.keyword if self._p.indexes is not None else None

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
        now: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """Ranked mem0-shaped items (with ``score``, and ``explain`` when asked)."""
        settings = self._p.retrieval
        now = now or it.utcnow()
        n = max(settings.candidates, top_k)
        vector = self._p.embedder.embed([query], purpose="query")[0]
        candidates: dict[str, Candidate] = {}
        collect(candidates, "dense", dense_hits(self._p.vector_store, vector, node, n))
        collect(
            candidates,
            "keyword",
            keyword_hits(
                self._p.vector_store,
                self._keyword_index,
                query,
                scope=scope,
                node=node,
                limit=n,
                statuses=statuses,
                known={i: c.payload for i, c in candidates.items()},
            ),
        )
        self._rescore(candidates, query, scope=scope, statuses=statuses, now=now)
        weights = {
            "dense": settings.dense_weight,
            "keyword": settings.keyword_weight,
            "entity": settings.entity_weight,
            "time": settings.time_weight,
            "recency": settings.recency_weight,
        }
        fuse(candidates, weights, method=settings.fusion, rrf_k=settings.rrf_k)
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
        found = keyword_hits(
            self._p.vector_store,
            self._keyword_index,
            text,
            scope=scope,
            node=scope.filter(),
            limit=limit,
            statuses=(it.STATUS_ACTIVE,),
        )
        hits = [SearchHit(i, s, p) for i, s, p in found if p.get(STATUS_KEY) == it.STATUS_ACTIVE]
        if len(hits) < limit:
            seen = {h.id for h in hits}
            recent = self._p.history.recent_memory_ids(scope.as_dict(), limit * 2)
            for record in self._p.vector_store.get([i for i in recent if i not in seen]):
                if len(hits) >= limit:
                    break
                payload = record.payload
                if payload.get(STATUS_KEY) == it.STATUS_ACTIVE and scope.contains(payload):
                    hits.append(SearchHit(record.id, 0.0, payload))
        return hits

    # -- stages -----------------------------------------------------------------------------

    def _rescore(
        self,
        candidates: dict[str, Candidate],
        query: str,
        *,
        scope: Scope,
        statuses: Sequence[str],
        now: datetime,
    ) -> None:
        """Add the entity, time and recency signals to the candidates."""
        settings = self._p.retrieval
        if not candidates:
            return
        if settings.entity_weight > 0 and self._p.indexes is not None:
            scores = entity_scores(
                self._p.indexes.entities,
                query,
                scope=scope,
                memory_ids=list(candidates),
                statuses=statuses,
            )
            rank_scores(candidates, "entity", scores)
        if settings.time_weight > 0:
            windows = time_windows(query, now)
            if windows:
                scores = {
                    i: time_score(c.payload.get("observed_ts"), windows)
                    for i, c in candidates.items()
                }
                rank_scores(candidates, "time", scores)
        if settings.recency_weight > 0:
            half_life = settings.recency_half_life_days
            scores = {
                i: recency_score(c.payload.get("observed_ts"), now, half_life)
                for i, c in candidates.items()
            }
            rank_scores(candidates, "recency", scores)

    def _rerank(self, query: str, ranked: list[Candidate]) -> list[Candidate]:
        assert self._p.reranker is not None
        texts = [c.payload.get("memory", "") for c in ranked]
        out = self._p.reranker.rerank(query, texts, top_k=len(texts))
        reordered = []
        for doc in out:
            cand = ranked[doc.index]
            cand.signals["rerank"] = Signal(float(doc.score), len(reordered) + 1)
            cand.score = float(doc.score)
            reordered.append(cand)
        return reordered

    @staticmethod
    def _item(cand: Candidate, explain: bool) -> dict[str, Any]:
        item = it.to_item(cand.id, cand.payload, score=cand.score)
        if explain:
            item["explain"] = {
                name: (
                    {"score": sig.score, "rank": sig.rank}
                    if name == "rerank"
                    else {"score": sig.score, "rank": sig.rank, "contribution": sig.contribution}
                )
                for name, sig in cand.signals.items()
            }
        return item
