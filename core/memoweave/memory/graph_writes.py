"""Keeping the graph in agreement with the memories, inside the journaled write.

:func:`plan_graph` derives what one :class:`~memoweave.memory.transaction.WritePlan` does
to the graph from the records it writes, so every write path (add, update, delete,
import) gets it without knowing the graph:

- a new active memory adds its relations: the triples its strategy extracted (given by
  memory id), else the offline links of its text and speaker
  (:func:`memoweave.graph.terms.offline_triples`); ``valid_from`` is its observation time;
- a memory that becomes superseded or (soft-)deleted *closes* its open relations
  (``valid_until`` = the superseding memory's observation time, or now;
  ``superseded_by`` = the superseding memory's relation with the same source and
  relationship, if any) instead of deleting them;
- a memory whose text is rewritten closes the relations its new text no longer asserts
  and adds the new ones;
- a hard-deleted memory's relations are removed (``delete_memories``), so what only it
  supported disappears and what another memory asserts stays.

The :class:`GraphChange` also carries its undo: the before-images of every relation of the
touched memories (and their endpoints' entity types). The journal stores it, so a failed
or crashed write restores the graph with the vector store and the history.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memoweave.graph.terms import Triple, entity_name, offline_triples, relationship_name
from memoweave.memory.payload import STATUS_ACTIVE
from memoweave.providers.graph_store import (
    GRAPH_SCOPE_KEYS,
    GraphEntity,
    GraphRelation,
    GraphStore,
)
from memoweave.providers.vector_store import STATUS_KEY, StoredRecord, VectorRecord

ScopeDict = dict[str, str]


def write_scope(payload: Mapping[str, Any]) -> ScopeDict:
    """The exact scope a stored memory was written in."""
    return {k: payload[k] for k in GRAPH_SCOPE_KEYS if isinstance(payload.get(k), str)}


def clean_triples(raw: Sequence[Sequence[Any]]) -> list[Triple]:
    """Normalised, deduplicated triples; unusable ones (empty names, self-loops) dropped."""
    out: dict[Triple, None] = {}
    for item in raw:
        if len(item) != 3:
            continue
        source, relation, target = (
            entity_name(item[0]),
            relationship_name(item[1]),
            entity_name(item[2]),
        )
        if source and relation and target and source != target:
            out[(source, relation, target)] = None
    return list(out)


@dataclass
class GraphChange:
    """What one write does to the graph and how to undo it."""

    upserts: list[GraphRelation] = field(default_factory=list)
    deletes: list[tuple[ScopeDict, list[str]]] = field(default_factory=list)
    touched: list[tuple[ScopeDict, list[str]]] = field(default_factory=list)
    before: list[GraphRelation] = field(default_factory=list)
    before_entities: list[GraphEntity] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.upserts or self.deletes)

    def apply(self, graph: GraphStore) -> None:
        """Remove the deleted memories' relations, then write the new and closed ones."""
        for scope, ids in self.deletes:
            graph.delete_memories(scope, ids)
        if self.upserts:
            graph.upsert(relations=self.upserts)

    def undo_entry(self) -> dict[str, Any]:
        """The journal's JSON form of the undo."""
        return {
            "touched": [[scope, ids] for scope, ids in self.touched],
            "relations": [dataclasses.asdict(r) for r in self.before],
            "entities": [dataclasses.asdict(e) for e in self.before_entities],
        }


def undo_graph(entry: Mapping[str, Any], graph: GraphStore) -> None:
    """Put the touched memories' relations back as they were before the write."""
    for scope, ids in entry["touched"]:
        graph.delete_memories(scope, ids)
    relations = [GraphRelation(**r) for r in entry["relations"]]
    entities = [GraphEntity(**e) for e in entry["entities"]]
    if relations or entities:
        graph.upsert(relations=relations, entities=entities)


def plan_graph(
    upserts: Sequence[VectorRecord],
    deletes: Sequence[str],
    before: Mapping[str, StoredRecord | None],
    graph: GraphStore,
    *,
    now_ts: float,
    triples: Mapping[str, Sequence[Triple]],
) -> GraphChange:
    """The graph side of one write (see the module docstring)."""
    change = GraphChange()
    groups: dict[tuple[str, ...], tuple[ScopeDict, list[str]]] = {}
    written = {r.id: r.payload for r in upserts}
    for memory_id in dict.fromkeys([*written, *deletes]):
        stored = before.get(memory_id)
        payload = stored.payload if stored is not None else written.get(memory_id, {})
        scope = write_scope(payload)
        if scope:
            key = tuple(scope.get(k, "") for k in GRAPH_SCOPE_KEYS)
            groups.setdefault(key, (scope, []))[1].append(memory_id)
    existing: dict[str, list[GraphRelation]] = {}
    for scope, ids in groups.values():
        old = [i for i in ids if before.get(i) is not None]
        for relation in graph.relations(scope, memory_ids=old) if old else []:
            existing.setdefault(relation.memory_id, []).append(relation)
        change.touched.append((scope, ids))
    change.before = [r for rels in existing.values() for r in rels]
    _keep_entity_types(change, graph)
    asserted: dict[str, set[Triple]] = {}
    for record in upserts:
        _plan_record(change, record, before.get(record.id), existing, triples, asserted)
    for record in upserts:
        _close_ended(change, record, before.get(record.id), existing, asserted, now_ts)
    deleted = set(deletes)
    for scope, ids in groups.values():
        gone = [i for i in ids if i in deleted and existing.get(i)]
        if gone:
            change.deletes.append((scope, gone))
    return change


def _keep_entity_types(change: GraphChange, graph: GraphStore) -> None:
    """Remember the typed entities the touched relations end on (for the undo)."""
    by_scope: dict[tuple[str, ...], tuple[ScopeDict, set[str]]] = {}
    for r in change.before:
        key = tuple(r.scope.get(k, "") for k in GRAPH_SCOPE_KEYS)
        by_scope.setdefault(key, (dict(r.scope), set()))[1].update((r.source, r.destination))
    for scope, names in by_scope.values():
        found = graph.entities(scope, names=sorted(names))
        change.before_entities.extend(e for e in found if e.entity_type is not None)


def _new_relations(record: VectorRecord, found: Sequence[Triple]) -> list[GraphRelation]:
    payload = record.payload
    scope = write_scope(payload)
    start = payload.get("observed_ts")
    return [
        GraphRelation(
            id=str(uuid.uuid4()),
            scope=scope,
            source=s,
            relationship=r,
            destination=d,
            memory_id=record.id,
            valid_from=float(start) if isinstance(start, (int, float)) else None,
        )
        for s, r, d in found
    ]


def _plan_record(
    change: GraphChange,
    record: VectorRecord,
    before: StoredRecord | None,
    existing: Mapping[str, list[GraphRelation]],
    triples: Mapping[str, Sequence[Triple]],
    asserted: dict[str, set[Triple]],
) -> None:
    """Add the relations of a new memory or of a rewritten one."""
    payload = record.payload
    text = payload.get("memory")
    if payload.get(STATUS_KEY, STATUS_ACTIVE) != STATUS_ACTIVE or not isinstance(text, str):
        return
    if before is not None and before.payload.get("memory") == text:
        return
    if record.id in triples:
        found = clean_triples(triples[record.id])
    else:
        found = offline_triples(text, payload.get("actor_id"))
    asserted[record.id] = set(found)
    kept = {r.triple() for r in existing.get(record.id, []) if r.is_open}
    change.upserts.extend(_new_relations(record, [t for t in found if t not in kept]))


def _close_ended(
    change: GraphChange,
    record: VectorRecord,
    before: StoredRecord | None,
    existing: Mapping[str, list[GraphRelation]],
    asserted: Mapping[str, set[Triple]],
    now_ts: float,
) -> None:
    """Close the open relations a status change or a rewrite ends."""
    open_before = [r for r in existing.get(record.id, []) if r.is_open] if before else []
    if not open_before:
        return
    payload = record.payload
    if payload.get(STATUS_KEY, STATUS_ACTIVE) == STATUS_ACTIVE:
        if record.id not in asserted:  # text unchanged
            return
        ending = [r for r in open_before if r.triple() not in asserted[record.id]]
        successor_id: Any = record.id
    else:
        ending = open_before
        successor_id = payload.get("superseded_by")
    successors = [r for r in change.upserts if r.memory_id == successor_id and r.is_open]
    starts = [r.valid_from for r in successors if r.valid_from is not None]
    until = min(starts) if starts else now_ts
    for relation in ending:
        follow = next(
            (
                s
                for s in successors
                if s.source == relation.source and s.relationship == relation.relationship
            ),
            None,
        )
        start = relation.valid_from
        change.upserts.append(
            dataclasses.replace(
                relation,
                valid_until=until if start is None else max(until, start),
                superseded_by=follow.id if follow else None,
            )
        )
