"""``CypherGraphStore``: the graph store contract implemented once over Cypher.

A Cypher plugin subclasses it and supplies three things: :meth:`_open_graph` (DDL and
binding, returning the graph's :class:`CypherGraph`), :meth:`_read` (one query, rows as
lists) and :meth:`_write` (several statements in ONE transaction, rolled back on any
failure). Validation, the breadth-first walk, ordering and orphan cleanup live here, so
every engine behaves the same; engine exceptions are wrapped into ``GraphStoreError``
by the plugin's two methods.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from memoweave.providers.graph_checks import (
    check_bounds,
    check_graph_name,
    check_ids,
    check_names,
    check_scope,
    check_write,
    fail,
)
from memoweave.providers.graph_cypher import CypherGraph, Statement, entity_from, relation_from
from memoweave.providers.graph_store import (
    GraphEntity,
    GraphHit,
    GraphRelation,
    GraphScope,
    GraphStore,
)


class CypherGraphStore(GraphStore):
    """The contract over a Cypher engine; see the module docstring."""

    def __init__(self) -> None:
        self._cypher: CypherGraph | None = None
        self._lock = threading.RLock()

    # -- what a plugin supplies -----------------------------------------------------------

    @abstractmethod
    def _open_graph(self, name: str) -> CypherGraph:
        """Create the graph's tables/labels if missing and return its statements."""

    @abstractmethod
    def _read(self, statement: Statement) -> list[list[Any]]:
        """Run one read query; every row as a list of values."""

    @abstractmethod
    def _write(self, statements: Sequence[Statement]) -> list[list[list[Any]]]:
        """Run ``statements`` in one transaction; the rows of each."""

    # -- the contract ---------------------------------------------------------------------

    def _graph(self) -> CypherGraph:
        if self._cypher is None:
            raise fail(
                "the graph store is not bound to a graph",
                "Call ensure_graph(name) first (Memory does it on first use).",
            )
        return self._cypher

    def ensure_graph(self, name: str) -> None:
        name = check_graph_name(name)
        with self._lock:
            self._cypher = self._open_graph(name)

    def upsert(
        self,
        *,
        entities: Sequence[GraphEntity] = (),
        relations: Sequence[GraphRelation] = (),
    ) -> None:
        ents, rels = check_write(entities, relations)
        with self._lock:
            graph = self._graph()
            statements: list[Statement] = []
            if rels:
                statements.append(graph.delete_relations_by_id([r.id for r in rels]))
                statements.append(graph.create_relations(rels))
            if ents:
                statements.append(graph.upsert_entities(ents))
            if statements:
                self._write(statements)

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
            found: dict[str, GraphHit] = {}
            for hop in range(1, hops + 1):
                if not frontier or len(found) >= limit:
                    break  # later hops sort after every hit already found
                step: set[str] = set()
                statement = graph.hop(
                    read,
                    sorted(frontier),
                    include_closed=include_closed,
                    seen=list(found),
                    limit=limit - len(found),
                )
                rows = self._read(statement)
                for row in rows:
                    relation = relation_from(row)
                    if relation.id not in found:
                        found[relation.id] = GraphHit(relation, hop)
                        step.update((relation.source, relation.destination))
                frontier = step - reached
                reached |= step
        ordered = sorted(found.values(), key=lambda h: (h.hop, h.relation.id))
        return ordered[:limit]

    def relations(
        self,
        scope: GraphScope,
        *,
        memory_ids: Sequence[str] | None = None,
        include_closed: bool = True,
    ) -> list[GraphRelation]:
        read = check_scope(scope)
        ids = None if memory_ids is None else check_ids(memory_ids)
        with self._lock:
            statement = self._graph().relations(read, memory_ids=ids, include_closed=include_closed)
            return [relation_from(row) for row in self._read(statement)]

    def entities(
        self, scope: GraphScope, *, names: Sequence[str] | None = None
    ) -> list[GraphEntity]:
        read = check_scope(scope)
        wanted = None if names is None else check_names(names)
        with self._lock:
            return [entity_from(row) for row in self._read(self._graph().entities(read, wanted))]

    def delete_memories(self, scope: GraphScope, memory_ids: Sequence[str]) -> None:
        read = check_scope(scope)
        ids = check_ids(memory_ids)
        if not ids:
            return
        with self._lock:
            graph = self._graph()
            rows = self._read(graph.endpoints_of_memories(read, ids))
            if not rows:
                return
            keys = sorted({key for row in rows for key in row})
            self._write([graph.delete_memories(read, ids), graph.delete_orphans(keys)])

    def delete_scope(self, scope: GraphScope) -> None:
        read = check_scope(scope)
        with self._lock:
            self._write([self._graph().delete_scope(read)])

    def count(self, scope: GraphScope | None = None, *, include_closed: bool = True) -> int:
        read = None if scope is None else check_scope(scope)
        with self._lock:
            [[value]] = self._read(self._graph().count(read, include_closed=include_closed))
        return int(value)

    def drop_graph(self) -> None:
        with self._lock:
            self._write([self._graph().drop()])
