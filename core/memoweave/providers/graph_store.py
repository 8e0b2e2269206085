"""The graph store contract: entities and relations extracted from memories.

A graph store keeps **entities** (nodes, identified by a normalised ``name``) and
**relations** (directed, named edges ``source -relationship-> destination``) beside the
vector store. A store instance is bound to one graph by :meth:`GraphStore.ensure_graph`;
every other method works on that graph and raises ``GraphStoreError`` (code
``graph_store_error``) if called before it.

Scopes
    Every entity and relation belongs to one *write scope*: the ``user_id`` / ``agent_id``
    / ``run_id`` of the memory it came from (a mapping holding at least one of those keys,
    values non-empty strings). Reads take a *read scope* and follow the vector stores'
    rule: an item matches when every key the read scope sets is equal (exact,
    case-sensitive) to the item's; keys it leaves unset match anything. So
    ``{"user_id": "alice"}`` sees alice's items of every agent and run, and never those of
    ``"alice2"``, ``"Alice"`` or ``"alice "``. An entity is identified by its write scope
    *and* its name: two scopes mentioning ``"paris"`` have two distinct entities, so no
    node is ever shared between tenants.

Relations
    ``id`` is an opaque string (the core writes UUIDs), unique in the graph. ``memory_id``
    is the provenance: the memory the relation was extracted from; the same triple
    asserted by two memories is two relations, so deleting one memory never removes what
    another still supports. ``valid_from`` / ``valid_until`` are POSIX timestamps (finite
    floats or ``None``); a relation is *open* while ``valid_until`` is ``None``. A
    contradicted relation is *closed* (``valid_until`` set, ``superseded_by`` naming the
    relation that replaced it) by upserting it again, never deleted.

Semantics every implementation must honour (checked by ``memoweave.testing``):

- ``upsert`` validates everything first (:func:`memoweave.providers.graph_checks
  .check_write`), so a rejected call writes nothing. It is idempotent: an entity is
  replaced by (scope, name), a relation by ``id`` (every field). A relation's endpoints
  are created in its scope if missing, without changing an existing entity's type.
- ``neighbours(scope, names, hops=N)`` walks the relations matching the read scope, in
  both directions, breadth-first from the entities called ``names``: hop 1 is every
  relation touching one of them, hop 2 every further relation touching an entity reached
  at hop 1, and so on. Entities are matched by name across the write scopes the read scope
  covers (alice's run 1 and run 2 connect through ``"melanie"``). Closed relations are
  neither returned nor followed unless ``include_closed``. Each relation is returned once,
  with its smallest hop, ordered by hop then id, at most ``limit``.
- ``relations`` / ``entities`` list what matches the read scope, ordered by id / name.
- ``delete_memories(scope, ids)`` removes every relation of the scope whose
  ``memory_id`` is in ``ids``, then every entity those relations touched that no
  remaining relation touches. ``delete_scope`` removes every relation and entity of the
  read scope; other scopes are untouched by both.
- ``drop_graph`` removes everything; the store stays bound.
- ``close`` is idempotent; a persistent store (``capabilities.persistent``) reopened on
  the same location sees everything written before ``close``.
- Engine failures raise :class:`memoweave.errors.GraphStoreError` with the engine's
  message. Values reach the engine as bound parameters, never spliced into query text.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

GRAPH_SCOPE_KEYS: tuple[str, ...] = ("user_id", "agent_id", "run_id")
"""The keys of a graph scope (the memory identity keys)."""
GraphScope = Mapping[str, str]
"""A write or read scope: a subset of :data:`GRAPH_SCOPE_KEYS` mapped to strings."""


@dataclass(frozen=True)
class GraphEntity:
    """A node: ``name`` is the normalised key, ``entity_type`` an optional label."""

    name: str
    scope: GraphScope
    entity_type: str | None = None


@dataclass(frozen=True)
class GraphRelation:
    """A directed edge with its provenance (``memory_id``) and validity interval."""

    id: str
    scope: GraphScope
    source: str
    relationship: str
    destination: str
    memory_id: str
    valid_from: float | None = None
    valid_until: float | None = None
    superseded_by: str | None = None

    @property
    def is_open(self) -> bool:
        """Whether the relation still holds (no ``valid_until``)."""
        return self.valid_until is None

    def triple(self) -> tuple[str, str, str]:
        """``(source, relationship, destination)``."""
        return (self.source, self.relationship, self.destination)


@dataclass(frozen=True)
class GraphHit:
    """One relation found by :meth:`GraphStore.neighbours`, ``hop`` steps from the start."""

    relation: GraphRelation
    hop: int


@dataclass(frozen=True)
class GraphStoreCapabilities:
    """Optional features.

    persistent: data survives ``close`` and reopening with the same configuration.
    """

    persistent: bool = False


class GraphStore(ABC):
    """Entities and relations of memories. See the module docstring for the contract."""

    capabilities: GraphStoreCapabilities = GraphStoreCapabilities()

    @abstractmethod
    def ensure_graph(self, name: str) -> None:
        """Create the graph ``name`` (``[A-Za-z][A-Za-z0-9_]*``, <= 48 chars) if missing,
        open it otherwise, and bind this store to it."""

    @abstractmethod
    def upsert(
        self,
        *,
        entities: Sequence[GraphEntity] = (),
        relations: Sequence[GraphRelation] = (),
    ) -> None:
        """Insert or replace ``entities`` (by scope and name) and ``relations`` (by id)."""

    @abstractmethod
    def neighbours(
        self,
        scope: GraphScope,
        names: Sequence[str],
        *,
        hops: int = 1,
        limit: int = 100,
        include_closed: bool = False,
    ) -> list[GraphHit]:
        """Relations within ``hops`` of the entities called ``names`` (see the contract)."""

    @abstractmethod
    def relations(
        self,
        scope: GraphScope,
        *,
        memory_ids: Sequence[str] | None = None,
        include_closed: bool = True,
    ) -> list[GraphRelation]:
        """The relations of ``scope`` (of ``memory_ids`` if given), ordered by id."""

    @abstractmethod
    def entities(
        self, scope: GraphScope, *, names: Sequence[str] | None = None
    ) -> list[GraphEntity]:
        """The entities of ``scope`` (called ``names`` if given), ordered by name."""

    @abstractmethod
    def delete_memories(self, scope: GraphScope, memory_ids: Sequence[str]) -> None:
        """Remove the relations of ``memory_ids`` in ``scope`` and the entities they
        leave without any relation."""

    @abstractmethod
    def delete_scope(self, scope: GraphScope) -> None:
        """Remove every relation and entity matching ``scope``."""

    @abstractmethod
    def count(self, scope: GraphScope | None = None, *, include_closed: bool = True) -> int:
        """How many relations match ``scope`` (all of them for ``None``)."""

    @abstractmethod
    def drop_graph(self) -> None:
        """Delete every entity and relation of the bound graph; the store stays bound."""

    def close(self) -> None:  # noqa: B027 - optional hook, default does nothing
        """Flush and release the engine. Idempotent."""


def scope_matches(read: GraphScope, written: Mapping[str, Any]) -> bool:
    """The read-scope rule: every key ``read`` sets equals ``written``'s."""
    return all(written.get(key) == value for key, value in read.items())


__all__ = [
    "GRAPH_SCOPE_KEYS",
    "GraphEntity",
    "GraphHit",
    "GraphRelation",
    "GraphScope",
    "GraphStore",
    "GraphStoreCapabilities",
    "scope_matches",
]
