"""The Cypher every Cypher-speaking graph store plugin shares (Kuzu/LadybugDB, Neo4j,
FalkorDB, Memgraph), so the graph contract is implemented once.

:class:`CypherGraph` renders the statements of one graph (node label ``<graph>_entity``,
relationship type ``<graph>_rel``) and converts rows both ways; a plugin only runs them
(in one transaction per contract call) and owns its DDL and connection handling. Values
always travel as bound parameters; the only text spliced into a statement is the graph
name (checked by :func:`memoweave.providers.graph_checks.check_graph_name`) and the fixed
scope property names. Engines differ in one place, the cast of a possibly-null float
parameter, given as :attr:`CypherGraph.to_double`.

Data model: an entity node holds ``key`` (:func:`graph_checks.entity_key`, unique),
``name``, ``entity_type`` and the scope properties ``user_id`` / ``agent_id`` /
``run_id`` (null when unset); a relation edge holds ``id``, ``relationship``,
``memory_id``, the scope properties, ``valid_from``, ``valid_until`` and
``superseded_by``. A relation's endpoints are entities of its own write scope, so
deleting a scope's entities with their edges (``DETACH DELETE``) clears exactly that scope.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memoweave.providers.graph_checks import check_graph_name, entity_key
from memoweave.providers.graph_store import GRAPH_SCOPE_KEYS, GraphEntity, GraphRelation

Statement = tuple[str, dict[str, Any]]
"""A query text and its parameters."""

REL_COLUMNS = (
    "r.id, s.name, r.relationship, d.name, r.memory_id, r.user_id, r.agent_id, r.run_id, "
    "r.valid_from, r.valid_until, r.superseded_by"
)
ENTITY_COLUMNS = "n.name, n.user_id, n.agent_id, n.run_id, n.entity_type"


def kuzu_double(expr: str) -> str:
    """Kuzu / LadybugDB: a null list-item field is typed STRING, so cast it."""
    return f"CAST({expr} AS DOUBLE)"


def plain_double(expr: str) -> str:
    """Neo4j, FalkorDB, Memgraph: parameters keep their types."""
    return expr


def scope_condition(alias: str, scope: Mapping[str, str], params: dict[str, Any]) -> str:
    """``alias.user_id = $scope_user_id AND ...`` for the keys ``scope`` sets."""
    parts = []
    for key in GRAPH_SCOPE_KEYS:
        if key in scope:
            params[f"scope_{key}"] = scope[key]
            parts.append(f"{alias}.{key} = $scope_{key}")
    return " AND ".join(parts)


def relation_row(relation: GraphRelation) -> dict[str, Any]:
    """The UNWIND row of one validated relation (keys in a fixed order)."""
    scope = relation.scope
    return {
        "id": relation.id,
        "skey": entity_key(scope, relation.source),
        "dkey": entity_key(scope, relation.destination),
        "source": relation.source,
        "destination": relation.destination,
        "relationship": relation.relationship,
        "memory_id": relation.memory_id,
        **{key: scope.get(key) for key in GRAPH_SCOPE_KEYS},
        "valid_from": relation.valid_from,
        "valid_until": relation.valid_until,
        "superseded_by": relation.superseded_by,
    }


def entity_row(entity: GraphEntity) -> dict[str, Any]:
    """The UNWIND row of one validated entity."""
    return {
        "key": entity_key(entity.scope, entity.name),
        "name": entity.name,
        **{key: entity.scope.get(key) for key in GRAPH_SCOPE_KEYS},
        "entity_type": entity.entity_type,
    }


def _scope_of(values: Sequence[Any]) -> dict[str, str]:
    return {k: v for k, v in zip(GRAPH_SCOPE_KEYS, values, strict=True) if v is not None}


def relation_from(row: Sequence[Any]) -> GraphRelation:
    """A relation from the values of :data:`REL_COLUMNS`."""
    rid, source, relationship, destination, memory_id, u, a, r, start, end, by = row
    return GraphRelation(
        id=rid,
        scope=_scope_of((u, a, r)),
        source=source,
        relationship=relationship,
        destination=destination,
        memory_id=memory_id,
        valid_from=None if start is None else float(start),
        valid_until=None if end is None else float(end),
        superseded_by=by,
    )


def entity_from(row: Sequence[Any]) -> GraphEntity:
    """An entity from the values of :data:`ENTITY_COLUMNS`."""
    name, u, a, r, kind = row
    return GraphEntity(name=name, scope=_scope_of((u, a, r)), entity_type=kind)


@dataclass(frozen=True)
class CypherGraph:
    """The statements of graph ``name``; ``to_double`` renders a float cast."""

    name: str
    to_double: Any = plain_double

    def __post_init__(self) -> None:
        check_graph_name(self.name)

    @property
    def node(self) -> str:
        return f"{self.name}_entity"

    @property
    def edge(self) -> str:
        return f"{self.name}_rel"

    # -- writes ---------------------------------------------------------------------------

    def delete_relations_by_id(self, ids: Sequence[str]) -> Statement:
        """Remove the edges with these ids (before re-creating them)."""
        return (f"MATCH ()-[r:{self.edge}]->() WHERE r.id IN $ids DELETE r", {"ids": list(ids)})

    def create_relations(self, relations: Sequence[GraphRelation]) -> Statement:
        """MERGE both endpoints (scope set on creation only) and CREATE each edge."""
        scope_set = ", ".join(f"{{n}}.{k} = x.{k}" for k in GRAPH_SCOPE_KEYS)
        dbl = self.to_double
        text = (
            f"UNWIND $rows AS x "
            f"MERGE (s:{self.node} {{key: x.skey}}) "
            f"ON CREATE SET s.name = x.source, {scope_set.format(n='s')} "
            f"MERGE (d:{self.node} {{key: x.dkey}}) "
            f"ON CREATE SET d.name = x.destination, {scope_set.format(n='d')} "
            f"CREATE (s)-[:{self.edge} {{id: x.id, relationship: x.relationship, "
            f"memory_id: x.memory_id, user_id: x.user_id, agent_id: x.agent_id, "
            f"run_id: x.run_id, valid_from: {dbl('x.valid_from')}, "
            f"valid_until: {dbl('x.valid_until')}, superseded_by: x.superseded_by}}]->(d)"
        )
        return text, {"rows": [relation_row(r) for r in relations]}

    def upsert_entities(self, entities: Sequence[GraphEntity]) -> Statement:
        """MERGE each entity by key and set its name, scope and type."""
        sets = ", ".join(f"n.{k} = x.{k}" for k in GRAPH_SCOPE_KEYS)
        text = (
            f"UNWIND $rows AS x MERGE (n:{self.node} {{key: x.key}}) "
            f"SET n.name = x.name, {sets}, n.entity_type = x.entity_type"
        )
        return text, {"rows": [entity_row(e) for e in entities]}

    def endpoints_of_memories(self, scope: Mapping[str, str], ids: Sequence[str]) -> Statement:
        """The endpoint keys of the scope's edges of memories ``ids``."""
        params: dict[str, Any] = {"ids": list(ids)}
        where = scope_condition("r", scope, params)
        text = (
            f"MATCH (s:{self.node})-[r:{self.edge}]->(d:{self.node}) "
            f"WHERE r.memory_id IN $ids AND {where} RETURN s.key, d.key"
        )
        return text, params

    def delete_memories(self, scope: Mapping[str, str], ids: Sequence[str]) -> Statement:
        """Remove the scope's edges of memories ``ids``."""
        params: dict[str, Any] = {"ids": list(ids)}
        where = scope_condition("r", scope, params)
        text = f"MATCH ()-[r:{self.edge}]->() WHERE r.memory_id IN $ids AND {where} DELETE r"
        return text, params

    def delete_orphans(self, keys: Sequence[str]) -> Statement:
        """Remove the entities among ``keys`` that no edge touches any more."""
        text = (
            f"UNWIND $keys AS k MATCH (n:{self.node} {{key: k}}) "
            f"WHERE NOT EXISTS {{ MATCH (n)-[:{self.edge}]-() }} DELETE n"
        )
        return text, {"keys": list(keys)}

    def delete_scope(self, scope: Mapping[str, str]) -> Statement:
        """Remove the scope's entities with their edges."""
        params: dict[str, Any] = {}
        where = scope_condition("n", scope, params)
        return f"MATCH (n:{self.node}) WHERE {where} DETACH DELETE n", params

    def drop(self) -> Statement:
        """Remove every entity and edge of the graph."""
        return f"MATCH (n:{self.node}) DETACH DELETE n", {}

    # -- reads ----------------------------------------------------------------------------

    def hop(
        self,
        scope: Mapping[str, str],
        names: Sequence[str],
        *,
        include_closed: bool,
        seen: Sequence[str] = (),
        limit: int | None = None,
    ) -> Statement:
        """The scope's edges touching an entity called one of ``names``, except those in
        ``seen``; with ``limit``, the first ``limit`` by id."""
        params: dict[str, Any] = {"names": list(names)}
        where = scope_condition("r", scope, params)
        if not include_closed:
            where += " AND r.valid_until IS NULL"
        if seen:
            params["seen"] = list(seen)
            where += " AND NOT r.id IN $seen"
        tail = ""
        if limit is not None:
            params["limit"] = limit
            tail = " ORDER BY r.id LIMIT $limit"
        text = (
            f"MATCH (s:{self.node})-[r:{self.edge}]->(d:{self.node}) "
            f"WHERE (s.name IN $names OR d.name IN $names) AND {where} "
            f"RETURN {REL_COLUMNS}{tail}"
        )
        return text, params

    def relations(
        self,
        scope: Mapping[str, str],
        *,
        memory_ids: Sequence[str] | None,
        include_closed: bool,
    ) -> Statement:
        """The scope's edges (of ``memory_ids``), ordered by id."""
        params: dict[str, Any] = {}
        where = scope_condition("r", scope, params)
        if memory_ids is not None:
            params["ids"] = list(memory_ids)
            where += " AND r.memory_id IN $ids"
        if not include_closed:
            where += " AND r.valid_until IS NULL"
        text = (
            f"MATCH (s:{self.node})-[r:{self.edge}]->(d:{self.node}) "
            f"WHERE {where} RETURN {REL_COLUMNS} ORDER BY r.id"
        )
        return text, params

    def entities(self, scope: Mapping[str, str], names: Sequence[str] | None) -> Statement:
        """The scope's entities (called ``names``), ordered by name then key."""
        params: dict[str, Any] = {}
        where = scope_condition("n", scope, params)
        if names is not None:
            params["names"] = list(names)
            where += " AND n.name IN $names"
        text = f"MATCH (n:{self.node}) WHERE {where} RETURN {ENTITY_COLUMNS} ORDER BY n.name, n.key"
        return text, params

    def count(self, scope: Mapping[str, str] | None, *, include_closed: bool) -> Statement:
        """The number of edges matching ``scope``."""
        params: dict[str, Any] = {}
        parts = [scope_condition("r", scope, params)] if scope is not None else []
        if not include_closed:
            parts.append("r.valid_until IS NULL")
        where = f" WHERE {' AND '.join(parts)}" if parts else ""
        return f"MATCH ()-[r:{self.edge}]->(){where} RETURN count(r)", params
