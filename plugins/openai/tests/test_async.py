"""The async twins await ``AsyncOpenAI`` (never the sync client in a thread), and an
``AsyncMemory`` embeds through them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memoweave import AsyncMemory
from memoweave.runtime.aio import native_async


async def test_agenerate_awaits_the_async_client(openai_make_llm: Any) -> None:
    llm = openai_make_llm()
    answer = await llm.agenerate([{"role": "user", "content": "Say hi."}], max_tokens=4)
    assert answer.text.strip() and llm._transport._aclient is not None
    await llm.aclose()
    assert llm._transport._aclient is None


async def test_async_memory_embeds_through_aembed(
    openai_make_embedder: Any, tmp_path: Path
) -> None:
    embedder = openai_make_embedder()
    assert native_async(embedder, "embed") is not None
    config = {"vector_store": {"provider": "memory"}, "history_db_path": str(tmp_path / "h.db")}
    async with AsyncMemory(config, embedder=embedder) as memory:
        await memory.add("I play the cello in an orchestra.", user_id="alice", infer=False)
        hits = await memory.search("which instrument", user_id="alice")
        assert hits["results"][0]["memory"] == "I play the cello in an orchestra."
    assert embedder._transport._aclient is None  # closed with the memory
