"""The graph store conformance kit against LadybugDB, on a file and in memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoweave.plugins import ProviderRegistry, load_registry
from memoweave.testing import GraphStoreConformance
from memoweave.testing.gs_base import GraphFactory


@pytest.fixture(scope="module")
def registry() -> ProviderRegistry:
    return load_registry()


class TestLadybugFileConformance(GraphStoreConformance):
    """A database file under ``tmp_path``: persistent, reopened by the kit."""

    @pytest.fixture
    def graph_factory(self, tmp_path: Path, registry: ProviderRegistry) -> GraphFactory:
        config = {"path": str(tmp_path / "graph" / "db.lbug"), "buffer_pool_mb": 32}
        return lambda: registry.create("graph_store", "ladybug", config)


class TestLadybugInMemoryConformance(GraphStoreConformance):
    """``path: null``: an in-memory database, not persistent."""

    @pytest.fixture
    def graph_factory(self, tmp_path: Path, registry: ProviderRegistry) -> GraphFactory:
        return lambda: registry.create("graph_store", "ladybug", {"buffer_pool_mb": 32})
