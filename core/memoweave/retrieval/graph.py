"""The graph signal and the ``relations`` of a search.

The query's names and titles (:func:`memoweave.graph.terms.graph_entities`, the rules the
offline extractor links) start a breadth-first walk of the scope's open relations
(``retrieval.graph_hops`` hops). Every relation reached lends a score to the memory it
came from: ``1 / hop``, divided by the square root of how many relations were reached
through the same entity at that hop, so a relation found through a rare entity counts
more than one of the hundred touching a speaker's name. A memory's graph score is the sum
over its relations, capped at 1. Unlike the entity signal, the graph signal *adds*
candidates: a memory linked to a neighbour of the query's entities (hop 2 and beyond) is
found even when it shares no word with the query. Candidates it adds are read from the
vector store and kept only if they match the search's read filter.

The relations reached are also returned beside the results (mem0 v1's shape:
``source``, ``relationship``, ``destination``), with the memories supporting each.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memoweave.filters import FilterNode, evaluate
from memoweave.graph.terms import graph_entities
from memoweave.index.contracts import ScopeKeys
from memoweave.providers.graph_store import GraphHit, GraphStore
from memoweave.providers.vector_store import VectorStore
from memoweave.retrieval.candidates import SignalHits
from memoweave.runtime.steps import Steps, call

WALK_LIMIT = 200
"""Most relations one search walks."""


@dataclass(frozen=True)
class GraphContext:
    """What the walk from the query's entities found."""

    names: tuple[str, ...] = ()
    hits: tuple[GraphHit, ...] = ()
    scores: dict[str, float] = field(default_factory=dict)

    def relations(self, limit: int) -> list[dict[str, Any]]:
        """The distinct triples reached, nearest first, then by support: each with its
        ``hop`` and the ``memory_ids`` asserting it."""
        grouped: dict[tuple[str, str, str], dict[str, Any]] = {}
        for hit in self.hits:
            s, r, d = hit.relation.triple()
            entry = grouped.setdefault(
                (s, r, d),
                {"source": s, "relationship": r, "destination": d, "hop": hit.hop, "ids": {}},
            )
            entry["ids"][hit.relation.memory_id] = None
        ordered = sorted(grouped.values(), key=lambda e: (e["hop"], -len(e["ids"])))
        return [
            {
                "source": e["source"],
                "relationship": e["relationship"],
                "destination": e["destination"],
                "hop": e["hop"],
                "memory_ids": list(e["ids"]),
            }
            for e in ordered[:limit]
        ]


def graph_scores(names: tuple[str, ...], hits: tuple[GraphHit, ...]) -> dict[str, float]:
    """Each supporting memory's graph score (see the module docstring)."""
    frontier: set[str] = set(names)
    by_hop: dict[int, list[GraphHit]] = {}
    for hit in hits:
        by_hop.setdefault(hit.hop, []).append(hit)
    scores: dict[str, float] = {}
    for hop in sorted(by_hop):
        anchored = []
        for hit in by_hop[hop]:
            r = hit.relation
            anchored.append((hit, r.source if r.source in frontier else r.destination))
        degree: dict[str, int] = {}
        for _, anchor in anchored:
            degree[anchor] = degree.get(anchor, 0) + 1
        reached: set[str] = set()
        for hit, anchor in anchored:
            memory_id = hit.relation.memory_id
            share = 1.0 / hop / math.sqrt(degree[anchor])
            scores[memory_id] = min(1.0, scores.get(memory_id, 0.0) + share)
            reached.update((hit.relation.source, hit.relation.destination))
        frontier = reached
    return scores


def graph_context(
    graph: GraphStore | None, query: str, *, scope: ScopeKeys, hops: int
) -> Steps[GraphContext]:
    """Walk the graph from the query's entities (nothing without a graph or entities)."""
    names = tuple(graph_entities(query))
    if graph is None or not names or hops < 1:
        return GraphContext(names)
    found = yield call(graph.neighbours, scope.as_dict(), list(names), hops=hops, limit=WALK_LIMIT)
    hits = tuple(found)
    return GraphContext(names, hits, graph_scores(names, hits))


def graph_hits(
    store: VectorStore,
    context: GraphContext,
    *,
    node: FilterNode,
    known: Mapping[str, dict[str, Any]],
    limit: int,
) -> Steps[SignalHits]:
    """The ``limit`` best graph-scored memories matching ``node``, best first; payloads of
    memories not among ``known`` are read from the store."""
    ranked = sorted(context.scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
    missing = [i for i, _ in ranked if i not in known]
    fetched = (yield call(store.get, missing)) if missing else []
    payloads = {**{r.id: r.payload for r in fetched}, **known}
    return [
        (memory_id, score, payloads[memory_id])
        for memory_id, score in ranked
        if memory_id in payloads and evaluate(node, payloads[memory_id])
    ]


def graph_relations(
    store: VectorStore,
    context: GraphContext,
    *,
    node: FilterNode,
    known: Mapping[str, dict[str, Any]],
    limit: int,
) -> Steps[list[dict[str, Any]]]:
    """The ``limit`` nearest relations with at least one supporting memory the search's
    read filter admits (their ``memory_ids`` cut to those memories)."""
    if limit <= 0 or not context.hits:
        return []
    listed = context.relations(limit * 3)
    ids = list(dict.fromkeys(i for r in listed for i in r["memory_ids"] if i not in known))
    fetched = (yield call(store.get, ids)) if ids else []
    payloads = {**{r.id: r.payload for r in fetched}, **known}
    visible = {i for i, p in payloads.items() if evaluate(node, p)}
    out = []
    for relation in listed:
        kept = [i for i in relation["memory_ids"] if i in visible]
        if kept:
            out.append({**relation, "memory_ids": kept})
    return out[:limit]
