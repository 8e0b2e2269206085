"""The async suites: every standard test again, through a provider's ``a<method>`` twins.

A plugin that implements native async twins (an async SDK client) runs these beside its
sync suites; each overrides one fixture, the async counterpart of the sync suite's:

    class TestMyStoreAsync(AsyncVectorStoreConformance):
        @pytest.fixture
        def async_store_factory(self, tmp_path):
            config = {"path": str(tmp_path / "db")}
            return lambda: load_registry().create("vector_store", "mystore", config)

    class TestMyLLMAsync(AsyncLLMConformance):          # fixture async_llm
    class TestMyEmbedderAsync(AsyncEmbedderConformance):  # fixture async_embedder

The standard tests then drive the provider through :class:`memoweave.testing.blocking.
Blocking` (each call awaits the twin on a private event loop), so the twins are held to
exactly the same contract as the sync methods. Each suite adds two tests of its own:
the twins are native (not the contract's thread wrappers), and concurrent calls on one
loop return what the same calls return one at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memoweave.providers.embedder import Embedder
from memoweave.providers.llm import LLM
from memoweave.providers.vector_store import VectorStore
from memoweave.runtime.aio import native_async
from memoweave.testing.blocking import Blocking
from memoweave.testing.embedder import TEXTS, EmbedderConformance
from memoweave.testing.filter_cases import DIMS
from memoweave.testing.helpers import cosine
from memoweave.testing.llm import LLMConformance
from memoweave.testing.vector_store import VectorStoreConformance
from memoweave.testing.vs_base import record

STORE_TWINS: tuple[str, ...] = ("ensure_collection", "upsert", "search", "get", "delete")
STORE_TWINS += ("update", "list", "count", "drop_collection", "close")


def _assert_native(provider: object, names: tuple[str, ...]) -> None:
    missing = [f"a{n}" for n in names if native_async(provider, n) is None]
    assert not missing, f"{type(provider).__name__} has no native async twin: {missing}"


class _Bridges:
    """The blocking views made during one test; their loops closed afterwards."""

    def __init__(self) -> None:
        self.made: list[Blocking] = []

    def wrap(self, provider: Any) -> Any:
        view = Blocking(provider, prefix="a")
        self.made.append(view)
        return view

    def close(self) -> None:
        for view in self.made:
            view.close_loop()


class _AsyncRemote:
    """``provider_for_url`` providers driven through their twins as well."""

    @pytest.fixture(autouse=True)
    def _kit_bridges(self) -> Iterator[_Bridges]:
        bridges = _Bridges()
        self._bridges = bridges
        yield bridges
        bridges.close()

    def _remote_provider(self, base_url: str) -> Any:
        provider = super()._remote_provider(base_url)  # type: ignore[misc]  # the suite's, via the MRO
        return self._bridges.wrap(provider)


class AsyncVectorStoreConformance(VectorStoreConformance):
    """:class:`VectorStoreConformance` through the async twins; override
    ``async_store_factory`` (the same factory the sync suite's ``store_factory`` is)."""

    _kit_suite = True

    @pytest.fixture
    def async_store_factory(self, tmp_path: Any) -> Callable[[], VectorStore]:
        """Override me: return ``lambda: load_registry().create("vector_store", ...)``."""
        pytest.fail("Override the `async_store_factory(self, tmp_path)` fixture.")

    @pytest.fixture
    def store_factory(self, async_store_factory: Callable[[], VectorStore]) -> Iterator[Any]:
        """The sync suite's factory, each store driven through its twins."""
        bridges = _Bridges()
        yield lambda: bridges.wrap(async_store_factory())
        bridges.close()

    def test_threads_share_one_store(self, vector_store: Any) -> None:
        """Not run through the twins: one event loop drives them, never several threads
        (``test_concurrent_twin_calls_on_one_loop`` checks concurrency there); the sync
        suite runs it on the sync methods."""
        pytest.skip("the async twins run on one event loop; the sync suite covers threads")

    def test_async_twins_are_native(self, async_store_factory: Callable[[], VectorStore]) -> None:
        """The store overrides every async twin with its own async I/O.

        Troubleshooting: a store without an async SDK should not run this suite (the core
        runs its sync methods in a thread pool); one with an async client overrides
        ``aensure_collection`` ... ``aclose`` (and ``akeyword_search`` if it searches text).
        """
        store = async_store_factory()
        try:
            names = STORE_TWINS + (("keyword_search",) if store.capabilities.keyword_search else ())
            _assert_native(store, names)
        finally:
            store.close()

    def test_concurrent_twin_calls_on_one_loop(
        self, async_store_factory: Callable[[], VectorStore], collection_name: str
    ) -> None:
        """Twenty upserts and searches gathered on one loop all land and agree.

        Troubleshooting: keep no per-call state on the instance (a shared buffer, a
        cursor); create the async client once per event loop, not once per call.
        """
        store = async_store_factory()

        async def scenario() -> list[Any]:
            await store.aensure_collection(collection_name, DIMS, "cosine")
            records = [record(f"c{i}", {"user_id": f"u{i % 4}", "n": i}) for i in range(20)]
            await asyncio.gather(*(store.aupsert([r]) for r in records))
            hits = await asyncio.gather(
                *(store.asearch(r.vector, top_k=1) for r in records), store.acount()
            )
            await store.aclose()
            return [[h.id for h in found] for found in hits[:-1]] + [hits[-1]]

        loop = asyncio.new_event_loop()
        try:
            results = loop.run_until_complete(scenario())
        finally:
            loop.close()
        expected = [[record(f"c{i}").id] for i in range(20)]
        assert results[:-1] == expected and results[-1] == 20


class AsyncLLMConformance(_AsyncRemote, LLMConformance):
    """:class:`LLMConformance` through ``agenerate``; override ``async_llm``."""

    _kit_suite = True

    @pytest.fixture
    def async_llm(self) -> LLM:
        """Override me: yield an LLM built through the registry."""
        pytest.fail("Override the `async_llm` fixture in your AsyncLLMConformance subclass.")

    @pytest.fixture
    def llm(self, async_llm: LLM, _kit_bridges: _Bridges) -> Any:
        """The sync suite's LLM, driven through ``agenerate``."""
        return _kit_bridges.wrap(async_llm)

    def test_async_twins_are_native(self, async_llm: LLM) -> None:
        """``agenerate`` and ``aclose`` are the provider's own async I/O.

        Troubleshooting: override both with the SDK's async client; a provider without
        one should not run this suite.
        """
        _assert_native(async_llm, ("generate", "close"))

    def test_concurrent_twin_calls_on_one_loop(self, async_llm: LLM) -> None:
        """Three ``agenerate`` calls gathered on one loop each return an answer.

        Troubleshooting: do not share a response buffer or a stream between calls.
        """

        async def scenario() -> list[Any]:
            asks = [[{"role": "user", "content": f"Say the number {n}."}] for n in (1, 2, 3)]
            return await asyncio.gather(*(async_llm.agenerate(m, max_tokens=4) for m in asks))

        loop = asyncio.new_event_loop()
        try:
            answers = loop.run_until_complete(scenario())
        finally:
            loop.close()
        assert len(answers) == 3 and all(a.text.strip() for a in answers)


class AsyncEmbedderConformance(_AsyncRemote, EmbedderConformance):
    """:class:`EmbedderConformance` through ``aembed``; override ``async_embedder``."""

    _kit_suite = True

    @pytest.fixture
    def async_embedder(self) -> Embedder:
        """Override me: yield an Embedder built through the registry."""
        pytest.fail(
            "Override the `async_embedder` fixture in your AsyncEmbedderConformance subclass."
        )

    @pytest.fixture
    def embedder(self, async_embedder: Embedder, _kit_bridges: _Bridges) -> Any:
        """The sync suite's embedder, driven through ``aembed``."""
        return _kit_bridges.wrap(async_embedder)

    def test_async_twins_are_native(self, async_embedder: Embedder) -> None:
        """``aembed`` and ``aclose`` are the provider's own async I/O.

        Troubleshooting: override both with the SDK's async client; a provider without
        one should not run this suite.
        """
        _assert_native(async_embedder, ("embed", "close"))

    def test_concurrent_twin_calls_on_one_loop(self, async_embedder: Embedder) -> None:
        """``aembed`` calls gathered on one loop match the same texts embedded alone.

        Troubleshooting: keep batches and their results per call, in input order.
        """

        async def scenario() -> tuple[list[Any], list[Any]]:
            together = await asyncio.gather(*(async_embedder.aembed([t]) for t in TEXTS))
            alone = [await async_embedder.aembed([t]) for t in TEXTS]
            return together, alone

        loop = asyncio.new_event_loop()
        try:
            together, alone = loop.run_until_complete(scenario())
        finally:
            loop.close()
        for (a,), (b,) in zip(together, alone, strict=True):
            assert cosine(a, b) > 0.999


__all__ = ["AsyncEmbedderConformance", "AsyncLLMConformance", "AsyncVectorStoreConformance"]
