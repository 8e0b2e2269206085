"""The memoweave vector store conformance kit against the sqlite-vec store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memoweave.plugins import load_registry
from memoweave.providers.vector_store import VectorStore
from memoweave.testing import VectorStoreConformance


class TestSqliteVecConformance(VectorStoreConformance):
    """One database file per test."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Callable[[], VectorStore]:
        config = {"path": str(tmp_path / "vectors.db")}
        return lambda: load_registry().create("vector_store", "sqlite-vec", config)
