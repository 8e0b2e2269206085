"""The search pipeline: candidates, re-scoring signals, fusion, threshold, reranking.

1. The query is embedded once (purpose ``"query"``) and the store returns its dense
   candidates (:mod:`.dense`) while the keyword index ranks the query's words (BM25,
   :mod:`.keyword`); then the store returns the keyword-only candidates' payloads: a
   memory found only by its words can be returned.
2. Every stage is a pipeline step (:mod:`memoweave.runtime.steps`). ``AsyncMemory``
   awaits the providers' async I/O; both it and ``Memory`` run the keyword ranking
   concurrently with the embedding and the dense search (``Memory`` in the retriever's
   one worker thread, :mod:`memoweave.runtime.overlap`; :meth:`Retriever.close` stops
   it), the other stages in turn.
3. With a graph store, the graph signal (:mod:`.graph`) adds the memories linked to the
   neighbours of the query's entities. The entity signal (:mod:`.entities`), the time
   signal and the optional recency signal (:mod:`.temporal`) re-score the candidates.
4. Every candidate gets every signal's raw score (the cosine of a hit the dense search did
   not return comes from its stored vector, the BM25 of a dense-only hit from the same
   index), brought to a bounded value by a fixed transform; :mod:`.fusion` combines the
   values into one score in [0, 1] with the fitted profile of each memory's kind
   (:mod:`.profiles`), so a score does not depend on the other candidates;
   ``threshold`` applies to it; the optional reranker then reorders the fused top
   ``rerank_top_n`` (a reranker of probabilities: the other results follow in fused
   order; any other reranker's results are all that is returned). A reranker whose
   scores are probabilities joins the fusion as the ``rerank`` signal
   (:func:`.fusion.fuse_reranked`) and ``threshold`` applies to that score; any other
   reranker's own score replaces the fused one. A first-person query
   and the fact memories reach the reranker rewritten about "the user"
   (:mod:`.rerank_view`); then the answer check (:mod:`.answer_check`) may shift every
   score by one logit amount, before ``threshold``. A reranker whose scores are
   similarities (late interaction) instead joins the first pass of the fused top as one
   more signal (:mod:`.similarity`), ``threshold`` applying after it; the
   ``late_interaction`` section's model does so at every search, before any reranker.
5. Each ranked :class:`.candidates.Candidate` carries every signal's raw score, rank and
   contribution (the contributions add up to the score; with a reranker of its own scale,
   ``rerank`` holds its score and rank and ``score`` is the reranker's), which
   :meth:`.candidates.Candidate.explanation` renders for ``explain=True``.

The caller's read filter (scope, status, expiry, metadata) applies to every signal. The
retriever is given exactly what it reads: the vector store, the embedder, the side
indexes, the optional reranker and late-interaction model, and the ``retrieval`` settings.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any

from memoweave.config.sections import RetrievalConfig
from memoweave.filters import FilterNode
from memoweave.index import SideIndexes
from memoweave.index.contracts import ScopeKeys
from memoweave.index.keyword_index import KeywordIndex
from memoweave.providers.embedder import Embedder
from memoweave.providers.graph_store import GraphStore
from memoweave.providers.reranker import Reranker
from memoweave.providers.vector_store import VectorStore
from memoweave.retrieval.answer_check import ablated_queries, check_value, shifted
from memoweave.retrieval.candidates import Candidate, Signal, SignalHits, collect, record
from memoweave.retrieval.dense import dense_hits, query_cosines
from memoweave.retrieval.entity_signal import entity_scores
from memoweave.retrieval.fusion import (
    ABOUT_USER,
    fuse_calibrated,
    fuse_reranked,
    fuse_rrf,
    signal_value,
)
from memoweave.retrieval.graph import GraphContext, graph_context, graph_hits, graph_relations
from memoweave.retrieval.keyword import keyword_payloads, keyword_scores, keyword_scores_of
from memoweave.retrieval.neighbours import neighbour_scores
from memoweave.retrieval.profiles import (
    KIND_FACT,
    KIND_TURN,
    MEMORY_KIND_KEY,
    PROFILES,
    SIGNALS,
    Profile,
    profile_of,
)
from memoweave.retrieval.rerank_view import rerank_view
from memoweave.retrieval.similarity import similarity_stage, staged_weights
from memoweave.retrieval.temporal import recency_score, time_score, time_windows
from memoweave.runtime.overlap import Overlap
from memoweave.runtime.steps import Steps, call, gather


class Retriever:
    """Runs searches over one vector store and its side indexes."""

    def __init__(
        self,
        *,
        store: VectorStore,
        embedder: Embedder,
        indexes: SideIndexes | None,
        reranker: Reranker | None,
        settings: RetrievalConfig,
        graph: GraphStore | None = None,
        late_interaction: Reranker | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._indexes = indexes
        self._reranker = reranker
        self._late = late_interaction
        self._settings = settings
        self._graph = graph
        self._profile_weights: dict[Profile, Mapping[str, float]] = {}
        self._overlap = Overlap()  # one worker: the keyword ranking beside the embedding
        weakref.finalize(self, self._overlap.close)  # a Memory dropped unclosed: no idle thread

    def graph_context(self, query: str, *, scope: ScopeKeys) -> Steps[GraphContext]:
        """The walk from the query's entities (empty without a graph store)."""
        return graph_context(self._graph, query, scope=scope, hops=self._settings.graph_hops)

    def relations(
        self, context: GraphContext, *, node: FilterNode, ranked: Sequence[Candidate]
    ) -> Steps[list[dict[str, Any]]]:
        """The relations a search returns beside its results (see :mod:`.graph`)."""
        known = {c.id: c.payload for c in ranked}
        limit = self._settings.graph_relations
        return graph_relations(self._store, context, node=node, known=known, limit=limit)

    @property
    def keyword_index(self) -> KeywordIndex | None:
        """The core's BM25 index, or ``None`` when keyword search is the store's."""
        return self._indexes.keyword if self._indexes is not None else None

    def search(
        self,
        query: str,
        *,
        scope: ScopeKeys,
        node: FilterNode,
        top_k: int,
        threshold: float | None,
        rerank: bool,
        statuses: Sequence[str],
        now: datetime,
        graph: GraphContext | None = None,
    ) -> Steps[list[Candidate]]:
        """The pipeline of the ``top_k`` best candidates for ``query``, best first, each
        with its signals; ``graph`` (from :meth:`graph_context`) adds the graph signal."""
        settings = self._settings
        n = max(settings.candidates, top_k)
        store, index = self._store, self.keyword_index
        (vector, dense), scored = yield gather(  # the keyword ranking needs no query vector
            self._dense(query, node, n),
            keyword_scores(store, index, query, scope=scope, node=node, limit=n, statuses=statuses),
            overlap=self._overlap,
        )
        candidates: dict[str, Candidate] = {}
        collect(candidates, dense)
        keyword = yield from keyword_payloads(
            store,
            scored,
            node=node,
            limit=n,
            known={i: c.payload for i, c in candidates.items()},
            with_vectors=True,
        )
        collect(candidates, keyword.hits)
        cosines: dict[str, float | None] = {i: s for i, s, _ in dense}
        cosines.update(query_cosines(vector, keyword.vectors))
        if graph is not None and graph.scores and settings.graph_weight > 0:
            known = {i: c.payload for i, c in candidates.items()}
            collect(
                candidates, (yield from graph_hits(store, graph, node=node, known=known, limit=n))
            )
            record(candidates, "graph", graph.scores)
        unscored = [i for i in candidates if i not in cosines]
        if unscored:  # brought in by the graph only: their dense score from their vectors
            records = yield call(store.get, unscored, with_vectors=True)
            cosines.update(query_cosines(vector, {r.id: r.vector for r in records if r.vector}))
        record(candidates, "dense", {i: c for i, c in cosines.items() if c is not None})
        record(candidates, "keyword", (yield from keyword_scores_of(keyword, list(candidates))))
        yield from self._rescore(candidates, query, scope=scope, statuses=statuses, now=now)
        for cand in candidates.values():
            for name, signal in cand.signals.items():
                signal.value = signal_value(name, signal, keyword.ceiling)
        if settings.fusion == "rrf":
            fuse_rrf(candidates, self._weights(PROFILES[KIND_FACT]), settings.rrf_k)
        else:
            self._fuse_calibrated(candidates)
        ranked = sorted(candidates.values(), key=lambda c: (-c.score, c.id))
        if self._late is not None and settings.fusion == "calibrated" and ranked:
            n = settings.late_interaction_top_n  # every search: one more first-pass signal
            late = yield from similarity_stage(self._late, query, ranked[:n], self._weights, "late")
            ranked = [*late, *ranked[n:]]
        reranker = self._reranker if rerank else None
        similar = (
            reranker is not None
            and reranker.scores_are_similarities
            and settings.fusion == "calibrated"
        )
        fused = reranker is not None and (reranker.scores_are_probabilities or similar)
        if threshold is not None and not fused:
            ranked = [c for c in ranked if c.score >= threshold]
        if reranker is not None and ranked:  # each kind of model at the depth it was fitted at
            n = settings.late_interaction_top_n if similar else settings.rerank_top_n
            head, tail = ranked[:n], ranked[n:]
            if similar:  # one more first-pass signal of the top (.similarity)
                head = yield from similarity_stage(reranker, query, head, self._weights)
            else:
                head, views = yield from self._rerank(query, head, fused)
            if fused:  # the rest follow in fused order, with their first-pass scores
                ranked = [*head, *tail]
                if settings.answer_check and not similar:
                    yield from self._answer_check(ranked, *views)
                if threshold is not None:
                    ranked = [c for c in ranked if c.score >= threshold]
            else:
                ranked = head
        return ranked[:top_k]

    def _dense(self, query: str, node: FilterNode, n: int) -> Steps[tuple[list[float], SignalHits]]:
        """The query's vector and its ``n`` dense hits."""
        vectors = yield call(self._embedder.embed, [query], purpose="query")
        return vectors[0], (yield from dense_hits(self._store, vectors[0], node, n))

    def close(self) -> None:
        """Stop the worker threads of :class:`Memory`'s overlapped stages (idempotent)."""
        self._overlap.close()

    def _fuse_calibrated(self, candidates: dict[str, Candidate]) -> None:
        """Calibrated fusion; then turns and facts whose neighbours scored get the neighbour
        signal (their first-pass scores, :mod:`.neighbours`) and are fused again with it."""
        for cand in candidates.values():
            profile = profile_of(cand.payload)
            fuse_calibrated(cand, self._weights(profile), profile.bias)
        if not any(p.neighbour > 0 for p in PROFILES.values()):
            return
        near = neighbour_scores(candidates)
        record(candidates, "neighbour", near)
        for memory_id in near:
            cand = candidates[memory_id]
            signal = cand.signals["neighbour"]
            signal.value = signal.score  # a fused score: already in [0, 1]
            profile = profile_of(cand.payload)
            fuse_calibrated(cand, self._weights(profile), profile.bias)

    def _weights(self, profile: Profile) -> Mapping[str, float]:
        """Each signal's weight: the profile's fitted one unless the settings set it; the
        graph's from the settings (``rrf`` weighs ranks with the fact profile's). Worked
        out once per profile (fusion asks for every candidate)."""
        held = self._profile_weights.get(profile)
        if held is None:
            settings = self._settings
            weights = profile.weights()
            for name in SIGNALS:
                if (override := getattr(settings, f"{name}_weight")) is not None:
                    weights[name] = override
            weights["graph"] = settings.graph_weight
            held = self._profile_weights[profile] = MappingProxyType(weights)
        return held

    def _first_pass(self, cand: Candidate, profile: Profile) -> tuple[Mapping[str, float], float]:
        """The weights and bias of ``cand``'s first-pass score: its kind's similarity
        stage's when the late-interaction model scored it, else its profile's."""
        stage = profile.similarity
        if stage is not None and "late" in cand.signals:
            return staged_weights(stage, self._weights, "late"), stage.first.bias
        return self._weights(profile), profile.bias

    def _uses(self, name: str) -> bool:
        """Whether signal ``name`` has a positive weight for some memory."""
        override: float | None = getattr(self._settings, f"{name}_weight")
        if override is not None:
            return override > 0
        return any(getattr(p, name) > 0 for p in PROFILES.values())

    # -- stages -----------------------------------------------------------------------------

    def _rescore(
        self,
        candidates: dict[str, Candidate],
        query: str,
        *,
        scope: ScopeKeys,
        statuses: Sequence[str],
        now: datetime,
    ) -> Steps[None]:
        """Add the entity, time and recency signals to the candidates."""
        settings = self._settings
        if not candidates:
            return
        if self._uses("entity") and self._indexes is not None:
            scores = yield call(
                entity_scores,
                self._indexes.entities,
                query,
                scope=scope,
                memory_ids=list(candidates),
                statuses=statuses,
            )
            record(candidates, "entity", scores)
        if self._uses("time"):
            windows = time_windows(query, now)
            if windows:
                scores = {
                    i: time_score(c.payload.get("observed_ts"), windows)
                    for i, c in candidates.items()
                }
                record(candidates, "time", {i: v for i, v in scores.items() if v > 0})
        if self._uses("recency"):
            half_life = settings.recency_half_life_days
            scores = {
                i: recency_score(c.payload.get("observed_ts"), now, half_life)
                for i, c in candidates.items()
            }
            record(candidates, "recency", {i: v for i, v in scores.items() if v > 0})

    def _rerank(
        self, query: str, ranked: list[Candidate], fused: bool
    ) -> Steps[tuple[list[Candidate], tuple[str, dict[str, str]]]]:
        """The reranker's order of ``ranked``: by the score fused with its probabilities
        (``fused``), else by its own score; and what the reranker read (the query, and the
        text of each candidate by id)."""
        assert self._reranker is not None
        texts = [c.payload.get("memory", "") for c in ranked]
        facts = [c.payload.get(MEMORY_KIND_KEY) != KIND_TURN for c in ranked]
        stored = texts
        query, texts = rerank_view(query, texts, facts)  # a first-person query: about "the user"
        views = (query, {c.id: text for c, text in zip(ranked, texts, strict=True)})
        out = yield call(self._reranker.rerank, query, texts, top_k=len(texts))
        reordered: list[Candidate] = []
        for doc in out:
            cand = ranked[doc.index]
            signal = cand.signals["rerank"] = Signal(float(doc.score), rank=len(reordered) + 1)
            if fused:
                signal.value = signal_value("rerank", signal, None)
                if texts[doc.index] != stored[doc.index]:  # the view rewrote it about the user
                    cand.signals[ABOUT_USER] = Signal(1.0, value=1.0)
                profile = profile_of(cand.payload)
                weights, bias = self._first_pass(cand, profile)
                fuse_reranked(cand, weights, bias, profile.reranked)
            else:
                cand.score, cand.reranker_scored = float(doc.score), True
            reordered.append(cand)
        if fused:
            reordered.sort(key=lambda c: (-c.score, c.id))
        return reordered, views

    def _answer_check(
        self, ranked: list[Candidate], query: str, texts: dict[str, str]
    ) -> Steps[None]:
        """Shift every score of ``ranked`` by the answer check of its first result, when
        that result's kind weighs the check (:mod:`.answer_check`); the order is kept."""
        assert self._reranker is not None
        first = ranked[0]
        weight = profile_of(first.payload).reranked.answer_check
        signal = first.signals.get("rerank")
        if weight <= 0 or signal is None:
            return
        fact = texts[first.id]
        pairs = [(variant, fact) for variant in ablated_queries(query, fact)]
        if not pairs:  # the fact holds every content word: nothing to check
            return
        # one call for every variant: a cross-encoder scores them in one batch
        without = [float(s) for s in (yield call(self._reranker.score_pairs, pairs))]
        value = check_value(signal.score, without)
        if value == 0.0:
            return
        shift = weight * value  # the signal's raw score: the check's value; value: the shift
        for cand in ranked:
            old = cand.score
            cand.score = shifted(old, shift)
            cand.signals["answer_check"] = Signal(value, value=shift, contribution=cand.score - old)
