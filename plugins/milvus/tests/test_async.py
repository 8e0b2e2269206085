"""AsyncMemory on Milvus Lite: the data calls awaited on AsyncMilvusClient."""

from __future__ import annotations

from pathlib import Path

from memoweave import AsyncMemory
from memoweave.testing.doubles import HashingEmbedder


async def test_async_memory_awaits_the_async_milvus_client(tmp_path: Path) -> None:
    config = {
        "vector_store": {"provider": "milvus", "config": {"uri": str(tmp_path / "m.db")}},
        "history_db_path": str(tmp_path / "history.db"),
    }
    async with AsyncMemory(config, embedder=HashingEmbedder(dims=16)) as memory:
        await memory.add("I grow tomatoes on my balcony.", user_id="alice", infer=False)
        hits = await memory.search("tomatoes", user_id="alice")
        assert hits["results"][0]["memory"] == "I grow tomatoes on my balcony."
        assert memory._providers.vector_store._client._aclient is not None
    async with AsyncMemory(config, embedder=HashingEmbedder(dims=16)) as memory:
        listed = await memory.get_all(user_id="alice")  # reopened: the Lite file was released
        assert [m["memory"] for m in listed["results"]] == ["I grow tomatoes on my balcony."]
