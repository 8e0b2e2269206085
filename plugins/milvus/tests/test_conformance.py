"""The memoweave vector store conformance kit against Milvus Lite (one .db per test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoweave.plugins import load_registry
from memoweave.testing import AsyncVectorStoreConformance, VectorStoreConformance


class TestMilvusLiteConformance(VectorStoreConformance):
    @pytest.fixture
    def store_factory(self, tmp_path: Path):
        config = {"uri": str(tmp_path / "m.db")}
        return lambda: load_registry().create("vector_store", "milvus", config)


class TestMilvusLiteAsyncConformance(AsyncVectorStoreConformance):
    """The same suite through the async twins: AsyncMilvusClient on the Lite server."""

    @pytest.fixture
    def async_store_factory(self, tmp_path: Path):
        config = {"uri": str(tmp_path / "m.db")}
        return lambda: load_registry().create("vector_store", "milvus", config)
