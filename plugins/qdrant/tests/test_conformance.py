"""The memoweave vector store conformance kit against every embedded Qdrant mode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memoweave.plugins import load_registry
from memoweave.providers.vector_store import VectorStore
from memoweave.testing import AsyncVectorStoreConformance, VectorStoreConformance


class TestQdrantEdgeConformance(VectorStoreConformance):
    """Qdrant Edge, a new collection split into the default number of partitions."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Callable[[], VectorStore]:
        config = {"mode": "edge", "path": str(tmp_path / "edge")}
        return lambda: load_registry().create("vector_store", "qdrant", config)


class TestQdrantEdgeSingleShardConformance(VectorStoreConformance):
    """Qdrant Edge, one shard per collection (the layout of collections created before
    partitions, and of ``partitions: 1``)."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Callable[[], VectorStore]:
        config = {"mode": "edge", "path": str(tmp_path / "edge"), "partitions": 1}
        return lambda: load_registry().create("vector_store", "qdrant", config)


class TestQdrantEdgeTextIndexConformance(VectorStoreConformance):
    """Qdrant Edge with its BM25 text index: the kit's keyword_search cases run too."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Callable[[], VectorStore]:
        config = {"mode": "edge", "path": str(tmp_path / "edge"), "text_index": True}
        return lambda: load_registry().create("vector_store", "qdrant", config)


class TestQdrantLocalPathConformance(VectorStoreConformance):
    """qdrant-client local mode on a folder, with the text index (keyword search)."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Callable[[], VectorStore]:
        config = {"mode": "local", "path": str(tmp_path / "local"), "text_index": True}
        return lambda: load_registry().create("vector_store", "qdrant", config)


class TestQdrantMemoryConformance(VectorStoreConformance):
    """qdrant-client local mode in memory (not persistent: the kit skips reopening)."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Callable[[], VectorStore]:
        config = {"location": ":memory:", "text_index": True}
        return lambda: load_registry().create("vector_store", "qdrant", config)


class TestQdrantMemoryAsyncConformance(AsyncVectorStoreConformance):
    """The same suite through AsyncQdrantClient (local mode in memory)."""

    @pytest.fixture
    def async_store_factory(self, tmp_path: Path) -> Callable[[], VectorStore]:
        config = {"location": ":memory:", "text_index": True}
        return lambda: load_registry().create("vector_store", "qdrant", config)
