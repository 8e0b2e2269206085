"""The graph store conformance kit against the built-in ``memory`` graph store (created
through the registry), plus proof that the kit catches real bugs: each deliberately broken
variant of the store must fail the standard test aimed at that bug."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from memoweave.errors import GraphStoreError
from memoweave.plugins import ProviderRegistry, load_registry
from memoweave.providers.graph_store import GraphHit, GraphRelation, GraphStore
from memoweave.stores import graph_memory
from memoweave.stores.graph_memory import InMemoryGraphStore
from memoweave.testing import GraphStoreConformance, create_provider
from memoweave.testing.gs_base import GraphFactory


@pytest.fixture(scope="module")
def kit_graph_registry() -> ProviderRegistry:
    return load_registry()


class TestMemoryGraphConformance(GraphStoreConformance):
    """In process memory only: ``persistent`` is False, so the reopen test is skipped."""

    @pytest.fixture
    def graph_factory(self, tmp_path: Path, kit_graph_registry: ProviderRegistry) -> GraphFactory:
        return lambda: kit_graph_registry.create("graph_store", "memory", {})


def test_registry_builds_the_memory_graph_and_rejects_config() -> None:
    assert isinstance(create_provider("graph_store", "memory"), InMemoryGraphStore)
    with pytest.raises(Exception, match="path"):
        create_provider("graph_store", "memory", {"path": "/tmp/x"})


# --- deliberately broken stores -------------------------------------------------------


class DirectedStore(InMemoryGraphStore):
    """Follows relations from source to destination only."""

    def neighbours(self, scope: Any, names: Sequence[str], **kw: Any) -> list[GraphHit]:
        return [h for h in super().neighbours(scope, names, **kw) if h.relation.source in names]


class ClosedFollowingStore(InMemoryGraphStore):
    """Ignores include_closed (returns and follows closed relations)."""

    def neighbours(self, scope: Any, names: Sequence[str], **kw: Any) -> list[GraphHit]:
        return super().neighbours(scope, names, **{**kw, "include_closed": True})


class FirstHopScopeStore(InMemoryGraphStore):
    """Applies the read scope to the first hop only."""

    def neighbours(self, scope: Any, names: Sequence[str], **kw: Any) -> list[GraphHit]:
        hits = super().neighbours(scope, names, hops=1)
        reached = {n for h in hits for n in (h.relation.source, h.relation.destination)}
        graph = self._graph()
        more = [
            GraphHit(r, 2)
            for r in graph.relations.values()
            if {r.source, r.destination} & reached and r.id not in {h.relation.id for h in hits}
        ]
        return hits + more


class TripleDeleteStore(InMemoryGraphStore):
    """Deletes every relation with the same triple as a deleted memory's (mem0 v1's bug)."""

    def delete_memories(self, scope: Any, memory_ids: Sequence[str]) -> None:
        doomed = {r.triple() for r in self.relations(scope, memory_ids=memory_ids)}
        ids = [r.memory_id for r in self.relations(scope) if r.triple() in doomed]
        super().delete_memories(scope, list(dict.fromkeys([*memory_ids, *ids])))


class ItemByItemStore(InMemoryGraphStore):
    """Validates and writes one relation at a time (a bad item leaves the earlier ones)."""

    def upsert(self, *, entities: Any = (), relations: Any = ()) -> None:
        if not isinstance(relations, (list, tuple)):
            raise GraphStoreError("relations must be a list")
        for relation in relations:
            super().upsert(relations=[relation])
        super().upsert(entities=entities)


class AliasingStore(InMemoryGraphStore):
    """Returns the relations it keeps instead of copies."""

    def relations(self, scope: Any, **kw: Any) -> list[GraphRelation]:
        copies = super().relations(scope, **kw)
        stored = self._graph().relations
        return [stored[r.id] for r in copies]


def _prefix_match(read: Any, written: Any) -> bool:
    return all(str(written.get(k, "")).startswith(v) for k, v in read.items())


def _name_only_key(scope: Any, name: str) -> str:
    return name


Patch = Callable[[pytest.MonkeyPatch], None]

BUGS: list[tuple[type[GraphStore], Patch | None, str, str]] = [
    (DirectedStore, None, "test_one_hop_follows_both_directions", "likes"),
    (ClosedFollowingStore, None, "test_closed_relations_are_skipped_unless_asked", "berlin"),
    (FirstHopScopeStore, None, "test_traversal_never_crosses_into_another_scope", "secret"),
    (TripleDeleteStore, None, "test_delete_memories_removes_only_their_relations", "('a', 'r'"),
    (ItemByItemStore, None, "test_invalid_input_is_rejected_and_writes_nothing", "wrote"),
    (AliasingStore, None, "test_returned_objects_do_not_alias_stored_state", "changed the store"),
    (
        InMemoryGraphStore,
        lambda mp: mp.setattr(graph_memory, "scope_matches", _prefix_match),
        "test_scope_values_are_isolated",
        "alice",
    ),
    (
        InMemoryGraphStore,
        lambda mp: mp.setattr(graph_memory, "entity_key", _name_only_key),
        "test_same_name_in_two_scopes_is_two_entities",
        "city",
    ),
]


@pytest.mark.parametrize(("store_cls", "patch", "test_name", "expected"), BUGS)
def test_kit_catches_broken_graph_store(
    monkeypatch: pytest.MonkeyPatch,
    store_cls: type[GraphStore],
    patch: Patch | None,
    test_name: str,
    expected: str,
) -> None:
    if patch is not None:
        patch(monkeypatch)
    store = store_cls()
    store.ensure_graph("kit_broken")
    with pytest.raises(AssertionError) as info:
        getattr(GraphStoreConformance(), test_name)(store)
    assert expected in str(info.value)
