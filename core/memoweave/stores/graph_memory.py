"""The built-in in-memory graph store (provider name ``memory``): the contract's reference.

Entities and relations live in dicts, one graph per name, in process memory only (not
``persistent``). A name index maps each entity name to the relations touching it, so a
hop costs the relations it visits, not the whole graph. Objects are frozen dataclasses
validated (and copied) on the way in. All methods are serialised by one lock.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from memoweave.providers.graph_checks import (
    check_bounds,
    check_graph_name,
    check_ids,
    check_names,
    check_scope,
    check_write,
    entity_key,
    fail,
)
from memoweave.providers.graph_store import (
    GraphEntity,
    GraphHit,
    GraphRelation,
    GraphScope,
    GraphStore,
    scope_matches,
)
from memoweave.stores.memory_config import InMemoryGraphConfig


@dataclass
class _Graph:
    entities: dict[str, GraphEntity] = field(default_factory=dict)
    relations: dict[str, GraphRelation] = field(default_factory=dict)
    by_name: dict[str, set[str]] = field(default_factory=dict)

    def link(self, relation: GraphRelation) -> None:
        for name in (relation.source, relation.destination):
            self.by_name.setdefault(name, set()).add(relation.id)

    def unlink(self, relation: GraphRelation) -> None:
        for name in (relation.source, relation.destination):
            ids = self.by_name.get(name)
            if ids is not None:
                ids.discard(relation.id)
                if not ids:
                    del self.by_name[name]

    def touches(self, scope: GraphScope, name: str) -> bool:
        """Whether a relation written in exactly ``scope`` touches entity ``name``."""
        key = entity_key(scope, name)
        return any(
            entity_key(self.relations[i].scope, name) == key for i in self.by_name.get(name, ())
        )


_Item = TypeVar("_Item", GraphRelation, GraphEntity)


def _copy(item: _Item) -> _Item:
    """``item`` with its own scope dict, so callers cannot change the store through it."""
    return replace(item, scope=dict(item.scope))


class InMemoryGraphStore(GraphStore):
    """Dict-backed graph store; see the module docstring."""

    def __init__(self, config: InMemoryGraphConfig | None = None) -> None:
        self._graphs: dict[str, _Graph] = {}
        self._bound: str | None = None
        self._lock = threading.RLock()

    def _graph(self) -> _Graph:
        if self._bound is None:
            raise fail(
                "the graph store is not bound to a graph",
                "Call ensure_graph(name) first (Memory does it on first use).",
            )
        return self._graphs[self._bound]

    def ensure_graph(self, name: str) -> None:
        name = check_graph_name(name)
        with self._lock:
            self._graphs.setdefault(name, _Graph())
            self._bound = name

    def upsert(
        self,
        *,
        entities: Sequence[GraphEntity] = (),
        relations: Sequence[GraphRelation] = (),
    ) -> None:
        ents, rels = check_write(entities, relations)
        with self._lock:
            graph = self._graph()
            for relation in rels:
                old = graph.relations.get(relation.id)
                if old is not None:
                    graph.unlink(old)
                graph.relations[relation.id] = relation
                graph.link(relation)
                for name in (relation.source, relation.destination):
                    key = entity_key(relation.scope, name)
                    graph.entities.setdefault(key, GraphEntity(name, relation.scope))
            for entity in ents:
                graph.entities[entity_key(entity.scope, entity.name)] = entity

    def neighbours(
        self,
        scope: GraphScope,
        names: Sequence[str],
        *,
        hops: int = 1,
        limit: int = 100,
        include_closed: bool = False,
    ) -> list[GraphHit]:
        read = check_scope(scope)
        frontier = set(check_names(names))
        hops, limit = check_bounds(hops, limit)
        with self._lock:
            graph = self._graph()
            reached = set(frontier)
            found: dict[str, int] = {}
            for hop in range(1, hops + 1):
                step: set[str] = set()
                for name in frontier:
                    for rel_id in graph.by_name.get(name, ()):
                        relation = graph.relations[rel_id]
                        if rel_id in found or not scope_matches(read, relation.scope):
                            continue
                        if relation.valid_until is not None and not include_closed:
                            continue
                        found[rel_id] = hop
                        step.update((relation.source, relation.destination))
                frontier = step - reached
                reached |= step
                if not frontier:
                    break
            ordered = sorted(found.items(), key=lambda item: (item[1], item[0]))
            return [GraphHit(_copy(graph.relations[i]), hop) for i, hop in ordered[:limit]]

    def relations(
        self,
        scope: GraphScope,
        *,
        memory_ids: Sequence[str] | None = None,
        include_closed: bool = True,
    ) -> list[GraphRelation]:
        read = check_scope(scope)
        wanted = None if memory_ids is None else set(check_ids(memory_ids))
        with self._lock:
            out = [
                _copy(r)
                for r in self._graph().relations.values()
                if scope_matches(read, r.scope)
                and (wanted is None or r.memory_id in wanted)
                and (include_closed or r.valid_until is None)
            ]
        return sorted(out, key=lambda r: r.id)

    def entities(
        self, scope: GraphScope, *, names: Sequence[str] | None = None
    ) -> list[GraphEntity]:
        read = check_scope(scope)
        wanted = None if names is None else set(check_names(names))
        with self._lock:
            out = [
                _copy(e)
                for e in self._graph().entities.values()
                if scope_matches(read, e.scope) and (wanted is None or e.name in wanted)
            ]
        return sorted(out, key=lambda e: (e.name, entity_key(e.scope, e.name)))

    def delete_memories(self, scope: GraphScope, memory_ids: Sequence[str]) -> None:
        read = check_scope(scope)
        wanted = set(check_ids(memory_ids))
        with self._lock:
            graph = self._graph()
            doomed = [
                r
                for r in graph.relations.values()
                if r.memory_id in wanted and scope_matches(read, r.scope)
            ]
            for relation in doomed:
                del graph.relations[relation.id]
                graph.unlink(relation)
            for relation in doomed:
                for name in (relation.source, relation.destination):
                    if not graph.touches(relation.scope, name):
                        graph.entities.pop(entity_key(relation.scope, name), None)

    def delete_scope(self, scope: GraphScope) -> None:
        read = check_scope(scope)
        with self._lock:
            graph = self._graph()
            for relation in [r for r in graph.relations.values() if scope_matches(read, r.scope)]:
                del graph.relations[relation.id]
                graph.unlink(relation)
            for key in [k for k, e in graph.entities.items() if scope_matches(read, e.scope)]:
                del graph.entities[key]

    def count(self, scope: GraphScope | None = None, *, include_closed: bool = True) -> int:
        read = None if scope is None else check_scope(scope)
        with self._lock:
            return sum(
                1
                for r in self._graph().relations.values()
                if (read is None or scope_matches(read, r.scope))
                and (include_closed or r.valid_until is None)
            )

    def drop_graph(self) -> None:
        with self._lock:
            self._graph()
            assert self._bound is not None
            self._graphs[self._bound] = _Graph()
