"""AsyncMemory on the Upstash store: every SDK call awaited on ``AsyncIndex``."""

from __future__ import annotations

from pathlib import Path

from memoweave_upstash.emulator import UpstashEmulator

from memoweave import AsyncMemory
from memoweave.testing.doubles import HashingEmbedder


async def test_async_memory_awaits_the_async_index(tmp_path: Path) -> None:
    with UpstashEmulator(dims=16, metric="cosine") as emu:
        config = {
            "vector_store": {
                "provider": "upstash",
                "config": {"url": emu.url, "token": emu.token},
            },
            "history_db_path": str(tmp_path / "history.db"),
        }
        async with AsyncMemory(config, embedder=HashingEmbedder(dims=16)) as memory:
            await memory.add("I restore old bicycles.", user_id="alice", infer=False)
            hits = await memory.search("bicycles", user_id="alice")
            assert hits["results"][0]["memory"] == "I restore old bicycles."
            transport = memory._providers.vector_store._client
            assert transport._aindex is not None  # the async SDK client did the I/O
