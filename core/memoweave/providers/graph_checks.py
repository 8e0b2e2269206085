"""Argument checks every graph store shares, so that all of them accept and reject the same
input (``GraphStoreError`` naming the offending item) and validate before writing."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from memoweave.errors import GraphStoreError
from memoweave.providers.graph_store import GRAPH_SCOPE_KEYS, GraphEntity, GraphRelation

MAX_NAME = 200
"""Longest entity name, in characters."""
MAX_LABEL = 64
"""Longest relationship or entity type, in characters."""
MAX_ID = 128
"""Longest relation, memory or scope id, in characters."""
MAX_HOPS = 5
MAX_LIMIT = 10_000
GRAPH_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,47}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def fail(message: str, hint: str | None = None, **details: Any) -> GraphStoreError:
    """A ``GraphStoreError`` to raise."""
    return GraphStoreError(message, hint=hint, details=details)


def check_graph_name(name: Any) -> str:
    """A graph name usable as a table or key prefix in every engine."""
    if not isinstance(name, str) or not GRAPH_NAME.fullmatch(name):
        raise fail(
            f"graph name must match {GRAPH_NAME.pattern}, got {name!r}",
            "Use letters, digits and underscores, starting with a letter.",
        )
    return name


def graph_name_for(collection: str) -> str:
    """A valid graph name for a vector collection name: the name itself when it is one,
    else its letters, digits and underscores plus a hash of the original (so two
    collections never share a graph)."""
    if GRAPH_NAME.fullmatch(collection):
        return collection
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", collection)[:30]
    digest = hashlib.sha256(collection.encode("utf-8")).hexdigest()[:12]
    return f"g_{cleaned}_{digest}"


def _text(value: Any, where: str, limit: int) -> str:
    if not isinstance(value, str) or not value or value.strip() != value:
        raise fail(f"{where} must be a non-empty string without padding, got {value!r}")
    if len(value) > limit:
        raise fail(f"{where} is {len(value)} characters long; the limit is {limit}")
    if _CONTROL.search(value):
        raise fail(f"{where} contains control characters: {value!r}")
    return value


def check_scope(scope: Any, where: str = "scope") -> dict[str, str]:
    """A plain copy of a read or write scope; ``None`` values are dropped."""
    if not isinstance(scope, Mapping):
        raise fail(f"{where} must be a mapping of user_id/agent_id/run_id to strings")
    out: dict[str, str] = {}
    for key, value in scope.items():
        if key not in GRAPH_SCOPE_KEYS:
            raise fail(f"{where} has key {key!r}; allowed: {', '.join(GRAPH_SCOPE_KEYS)}")
        if value is not None:
            out[key] = _text(value, f"{where}.{key}", MAX_ID)
    if not out:
        raise fail(f"{where} needs at least one of {', '.join(GRAPH_SCOPE_KEYS)}")
    return out


def check_names(names: Any, where: str = "names") -> list[str]:
    """A list of entity names (a bare string is rejected)."""
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
        raise fail(f"{where} must be a list of entity names, got {type(names).__name__}")
    return [_text(n, f"{where}[{i}]", MAX_NAME) for i, n in enumerate(names)]


def check_ids(ids: Any, where: str = "memory_ids") -> list[str]:
    """A list of ids (a bare string is rejected)."""
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence):
        raise fail(f"{where} must be a list of ids, got {type(ids).__name__}")
    return [_text(i, f"{where}[{n}]", MAX_ID) for n, i in enumerate(ids)]


def check_bounds(hops: Any, limit: Any) -> tuple[int, int]:
    """``hops`` in 1..MAX_HOPS and ``limit`` in 1..MAX_LIMIT (bools rejected)."""
    for name, value, top in (("hops", hops, MAX_HOPS), ("limit", limit, MAX_LIMIT)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
            raise fail(f"{name} must be an int in 1..{top}, got {value!r}")
    return hops, limit


def _timestamp(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise fail(f"{where} must be a finite POSIX timestamp or None, got {value!r}")
    return float(value)


def check_entity(entity: Any, where: str) -> GraphEntity:
    """A validated copy of one entity."""
    if not isinstance(entity, GraphEntity):
        raise fail(f"{where} must be a GraphEntity, got {type(entity).__name__}")
    kind = entity.entity_type
    return GraphEntity(
        name=_text(entity.name, f"{where}.name", MAX_NAME),
        scope=check_scope(entity.scope, f"{where}.scope"),
        entity_type=None if kind is None else _text(kind, f"{where}.entity_type", MAX_LABEL),
    )


def check_relation(relation: Any, where: str) -> GraphRelation:
    """A validated copy of one relation (floats for the timestamps)."""
    if not isinstance(relation, GraphRelation):
        raise fail(f"{where} must be a GraphRelation, got {type(relation).__name__}")
    start = _timestamp(relation.valid_from, f"{where}.valid_from")
    end = _timestamp(relation.valid_until, f"{where}.valid_until")
    if start is not None and end is not None and end < start:
        raise fail(f"{where}.valid_until ({end}) is before valid_from ({start})")
    by = relation.superseded_by
    return GraphRelation(
        id=_text(relation.id, f"{where}.id", MAX_ID),
        scope=check_scope(relation.scope, f"{where}.scope"),
        source=_text(relation.source, f"{where}.source", MAX_NAME),
        relationship=_text(relation.relationship, f"{where}.relationship", MAX_LABEL),
        destination=_text(relation.destination, f"{where}.destination", MAX_NAME),
        memory_id=_text(relation.memory_id, f"{where}.memory_id", MAX_ID),
        valid_from=start,
        valid_until=end,
        superseded_by=None if by is None else _text(by, f"{where}.superseded_by", MAX_ID),
    )


def check_write(entities: Any, relations: Any) -> tuple[list[GraphEntity], list[GraphRelation]]:
    """Validated copies of one ``upsert``'s arguments; duplicates within the call rejected."""
    for name, value in (("entities", entities), ("relations", relations)):
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
            raise fail(f"{name} must be a list, got {type(value).__name__}")
    ents = [check_entity(e, f"entities[{i}]") for i, e in enumerate(entities)]
    rels = [check_relation(r, f"relations[{i}]") for i, r in enumerate(relations)]
    seen_entities = {entity_key(e.scope, e.name) for e in ents}
    if len(seen_entities) != len(ents):
        raise fail("entities lists the same (scope, name) twice")
    if len({r.id for r in rels}) != len(rels):
        raise fail("relations lists the same id twice")
    return ents, rels


def entity_key(scope: Mapping[str, str], name: str) -> str:
    """An unambiguous key for the entity ``name`` of write scope ``scope`` (ids may contain
    any separator, so the parts are length-prefixed)."""
    parts = [scope.get(k) or "" for k in GRAPH_SCOPE_KEYS] + [name]
    return "".join(f"{len(p)}:{p}" for p in parts)
