"""``GraphStoreConformance``: the standard suite every graph store plugin runs.

Subclass it and override one fixture::

    class TestMyGraph(GraphStoreConformance):
        @pytest.fixture
        def graph_factory(self, tmp_path):
            config = {"path": str(tmp_path / "graph")}
            return lambda: load_registry().create("graph_store", "mygraph", config)

The callable must build an unbound store through the registry, at the same location on
every call within a test (the kit closes and reopens it) and a fresh location per test.
Optional behaviour is skipped from ``store.capabilities`` (``persistent``).
"""

from __future__ import annotations

from memoweave.testing.gs_base import GraphStoreFixtures
from memoweave.testing.gs_scope import GraphDeleteTests, GraphLifecycleTests, GraphScopeTests
from memoweave.testing.gs_traverse import TraversalTests
from memoweave.testing.gs_write import GraphBindingTests, GraphWriteTests
from memoweave.testing.guard import StandardTests


class GraphStoreConformance(
    GraphBindingTests,
    GraphWriteTests,
    TraversalTests,
    GraphScopeTests,
    GraphDeleteTests,
    GraphLifecycleTests,
    GraphStoreFixtures,
    StandardTests,
):
    """Every standard graph store test; override the ``graph_factory`` fixture."""

    _kit_suite = True


__all__ = ["GraphStoreConformance"]
