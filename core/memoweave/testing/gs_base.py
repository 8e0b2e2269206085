"""Fixtures and helpers shared by the graph store mixins.

The implementer overrides one fixture, ``graph_factory(self, tmp_path)``: it returns a
zero-argument callable that builds an *unbound* graph store through the registry, at the
same location on every call within one test and at a fresh location for every test. The
kit binds it with ``ensure_graph`` itself; ``graph_store`` is that bound store, closed
afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pytest

from memoweave.providers.graph_store import GraphHit, GraphRelation, GraphStore
from memoweave.testing.filter_cases import kit_id
from memoweave.testing.guard import check_built, check_factory_fixture

GraphFactory = Callable[[], GraphStore]

ALICE: dict[str, str] = {"user_id": "alice"}
BOB: dict[str, str] = {"user_id": "bob"}


class GraphStoreFixtures:
    """The fixtures every graph store mixin uses."""

    @pytest.fixture
    def graph_factory(self, tmp_path: Any) -> GraphFactory:
        """Override me: return ``lambda: load_registry().create("graph_store", name, cfg)``."""
        pytest.fail(
            "Override the `graph_factory(self, tmp_path)` fixture in your GraphStoreConformance "
            "subclass: return a zero-argument callable building your store through "
            "memoweave.plugins.load_registry().create('graph_store', '<name>', {...})."
        )

    @pytest.fixture(autouse=True)
    def _kit_checks_graph_factory(self, request: pytest.FixtureRequest) -> None:
        """The factory fixture is a callable (one clear failure per class if not)."""
        check_factory_fixture(request, ("graph_factory",), "graph store")

    @pytest.fixture
    def graph_name(self) -> str:
        """A graph name unique to the test (``kit_<10 hex>``)."""
        return f"kit_{uuid.uuid4().hex[:10]}"

    @pytest.fixture
    def graph_store(self, graph_factory: GraphFactory, graph_name: str) -> Iterator[GraphStore]:
        """A store bound to a fresh graph; closed afterwards."""
        store = new_graph_store(graph_factory)
        try:
            store.ensure_graph(graph_name)
            yield store
        finally:
            store.close()


def rel(
    label: str,
    source: str,
    relationship: str,
    destination: str,
    *,
    scope: Mapping[str, str] = ALICE,
    memory: str = "m1",
    **fields: Any,
) -> GraphRelation:
    """A relation whose id and memory id derive from readable labels."""
    return GraphRelation(
        id=kit_id(f"rel-{label}"),
        scope=dict(scope),
        source=source,
        relationship=relationship,
        destination=destination,
        memory_id=kit_id(f"mem-{memory}"),
        **fields,
    )


def mem(label: str) -> str:
    """The memory id ``rel(..., memory=label)`` writes."""
    return kit_id(f"mem-{label}")


def hop_map(hits: Sequence[GraphHit]) -> dict[tuple[str, str, str], int]:
    """``{(source, relationship, destination): hop}`` of ``hits`` (each triple once)."""
    out: dict[tuple[str, str, str], int] = {}
    for hit in hits:
        triple = hit.relation.triple()
        assert triple not in out, f"relation {triple} returned twice by neighbours"
        out[triple] = hit.hop
    return out


def triples(relations: Sequence[GraphRelation]) -> list[tuple[str, str, str]]:
    """The sorted triples of ``relations``."""
    return sorted(r.triple() for r in relations)


def new_graph_store(factory: GraphFactory) -> GraphStore:
    """A new, unbound store from ``factory``, checked to be a :class:`GraphStore`."""
    return check_built(factory(), GraphStore, "graph_factory")  # type: ignore[no-any-return]  # checked


def bound_graph(factory: GraphFactory, name: str) -> GraphStore:
    """A new store instance from ``factory`` bound to graph ``name``."""
    store = new_graph_store(factory)
    try:
        store.ensure_graph(name)
    except BaseException:
        store.close()
        raise
    return store
