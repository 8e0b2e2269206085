"""Small helpers of ``memoweave.providers`` the plugins share: ``SdkClients`` (the sync
client as given, one async client per event loop, both closed) and ``ranked`` (the
reranker contract's answer from scores)."""

from __future__ import annotations

import asyncio

from memoweave.providers.reranker import RankedDocument, ranked
from memoweave.providers.sdk_clients import SdkClients


class Client:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


class AsyncClient:
    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.closed = False

    async def close(self) -> None:
        self.closed = True


def test_one_async_client_per_event_loop_and_both_closed() -> None:
    built: list[AsyncClient] = []

    def build() -> AsyncClient:
        built.append(AsyncClient())
        return built[-1]

    sync = Client()
    clients = SdkClients(sync, build)
    assert clients.client is sync and not built  # the async client waits for its first use

    async def use_twice() -> AsyncClient:
        first = clients.async_client()
        assert clients.async_client() is first
        return first

    first = asyncio.run(use_twice())
    second = asyncio.run(use_twice())  # a new loop: a new client bound to it
    assert first is not second and len(built) == 2
    asyncio.run(clients.aclose())
    assert second.closed and sync.closed


def test_ranked_is_best_first_ties_in_input_order_cut_at_top_k() -> None:
    docs = ["a", "b", "c", "d"]
    assert ranked(docs, [0.1, 0.9, 0.1, 0.5], 3) == [
        RankedDocument(1, "b", 0.9),
        RankedDocument(3, "d", 0.5),
        RankedDocument(0, "a", 0.1),
    ]
    assert ranked(docs, [0.0] * 4, 10) == [RankedDocument(i, d, 0.0) for i, d in enumerate(docs)]
    assert ranked([], [], 5) == []
