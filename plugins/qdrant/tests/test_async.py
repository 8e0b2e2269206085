"""AsyncMemory on qdrant-client local mode: awaited through AsyncQdrantClient, the folder
handed from the sync client to the async one, and a store never used both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoweave import AsyncMemory, VectorStoreError
from memoweave.plugins import load_registry
from memoweave.runtime.aio import native_async
from memoweave.testing.doubles import HashingEmbedder


async def test_async_memory_on_a_local_folder_persists(tmp_path: Path) -> None:
    config = {
        "vector_store": {"provider": "qdrant", "config": {"mode": "local", "path": str(tmp_path)}},
        "history_db_path": str(tmp_path / "history.db"),
    }
    async with AsyncMemory(config, embedder=HashingEmbedder(dims=32)) as memory:
        assert native_async(memory._providers.vector_store, "search") is not None
        await memory.add("I keep bees in Lisbon.", user_id="alice", infer=False)
        hits = await memory.search("bees", user_id="alice")
        assert hits["results"][0]["memory"] == "I keep bees in Lisbon."
    async with AsyncMemory(config, embedder=HashingEmbedder(dims=32)) as memory:
        listed = await memory.get_all(user_id="alice")
        assert [m["memory"] for m in listed["results"]] == ["I keep bees in Lisbon."]


async def test_a_local_store_serves_sync_or_async_not_both(tmp_path: Path) -> None:
    store = load_registry().create("vector_store", "qdrant", {"location": ":memory:"})
    await store.aensure_collection("c", 4)
    with pytest.raises(VectorStoreError, match="not both"):
        store.count()
    await store.aclose()
    edge = load_registry().create("vector_store", "qdrant", {"path": str(tmp_path / "edge")})
    try:
        assert native_async(edge, "search") is None  # Qdrant Edge: the instance's executor
    finally:
        edge.close()
