"""The async twins await ``ollama.AsyncClient`` (never the sync client in a thread)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memoweave.plugins import load_registry


async def test_agenerate_and_aembed_await_the_async_client(
    ollama_serve: Callable[..., Any],
) -> None:
    server = ollama_serve(chat=True, embed=True)
    llm = load_registry().create("llm", "ollama", {"host": server.url, "model": "smollm2:135m"})
    embedder = load_registry().create(
        "embedder", "ollama", {"host": server.url, "model": "all-minilm"}
    )
    try:
        answer = await llm.agenerate([{"role": "user", "content": "Say hi."}], max_tokens=4)
        [vector] = await embedder.aembed(["hello"])
        assert answer.text.strip() and len(vector) == embedder.dims
        assert llm._transport._aclient is not None and embedder._transport._aclient is not None
    finally:
        await llm.aclose()
        await embedder.aclose()
    assert llm._transport._aclient is None
