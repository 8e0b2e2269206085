"""The async suites run the standard tests through a provider's twins, and catch a twin
that breaks the contract its sync method keeps."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from memoweave.filters import FilterNode
from memoweave.providers.vector_store import SearchHit, StoredRecord, VectorRecord, VectorStore
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing import AsyncEmbedderConformance, AsyncVectorStoreConformance, Blocking
from memoweave.testing.doubles import HashingEmbedder
from memoweave.testing.filter_cases import DIMS
from memoweave.testing.vs_base import record


class AsyncMemoryStore(InMemoryVectorStore):
    """The in-memory store with native twins (each yields to the loop once)."""

    async def aensure_collection(self, name: str, dims: int, metric: Any = "cosine") -> None:
        await asyncio.sleep(0)
        self.ensure_collection(name, dims, metric)

    async def aupsert(self, records: Sequence[VectorRecord]) -> None:
        await asyncio.sleep(0)
        self.upsert(records)

    async def asearch(self, vector: Sequence[float], **kwargs: Any) -> list[SearchHit]:
        await asyncio.sleep(0)
        return self.search(vector, **kwargs)

    async def aget(self, ids: Sequence[str], **kwargs: Any) -> list[StoredRecord]:
        await asyncio.sleep(0)
        return self.get(ids, **kwargs)

    async def adelete(self, ids: Sequence[str]) -> None:
        await asyncio.sleep(0)
        self.delete(ids)

    async def aupdate(self, id: str, **kwargs: Any) -> None:
        await asyncio.sleep(0)
        self.update(id, **kwargs)

    async def alist(self, **kwargs: Any) -> Any:
        await asyncio.sleep(0)
        return self.list(**kwargs)

    async def acount(self, *, filter: FilterNode | None = None) -> int:
        await asyncio.sleep(0)
        return self.count(filter=filter)

    async def adrop_collection(self) -> None:
        await asyncio.sleep(0)
        self.drop_collection()

    async def akeyword_search(self, text: str, **kwargs: Any) -> list[SearchHit]:
        await asyncio.sleep(0)
        return self.keyword_search(text, **kwargs)

    async def aclose(self) -> None:
        await asyncio.sleep(0)
        self.close()


class TestAsyncMemoryStoreConformance(AsyncVectorStoreConformance):
    @pytest.fixture
    def async_store_factory(self) -> Callable[[], VectorStore]:
        return AsyncMemoryStore


class AsyncHashingEmbedder(HashingEmbedder):
    async def aembed(self, texts: Sequence[str], *, purpose: Any = "document") -> Any:
        await asyncio.sleep(0)
        return self.embed(texts, purpose=purpose)

    async def aclose(self) -> None:
        self.close()


class TestAsyncHashingEmbedderConformance(AsyncEmbedderConformance):
    @pytest.fixture
    def async_embedder(self) -> AsyncHashingEmbedder:
        return AsyncHashingEmbedder(dims=32)


class UnorderedTwinStore(AsyncMemoryStore):
    """Its sync ``get`` keeps the contract; its twin returns the records reversed."""

    async def aget(self, ids: Sequence[str], **kwargs: Any) -> list[StoredRecord]:
        return list(reversed(self.get(ids, **kwargs)))


def test_a_twin_breaking_the_contract_fails_the_async_suite() -> None:
    suite = TestAsyncMemoryStoreConformance()
    for store_class, fails in ((AsyncMemoryStore, False), (UnorderedTwinStore, True)):
        view = Blocking(store_class(), prefix="a")
        try:
            view.ensure_collection("kit_twins", DIMS, "cosine")
            if fails:
                with pytest.raises(AssertionError):
                    suite.test_get_skips_missing_and_keeps_order(view)
            else:
                suite.test_get_skips_missing_and_keeps_order(view)
        finally:
            view.close()
            view.close_loop()


def test_sync_only_store_is_not_native() -> None:
    suite = TestAsyncMemoryStoreConformance()
    with pytest.raises(AssertionError, match="aupsert"):
        suite.test_async_twins_are_native(InMemoryVectorStore)
    assert record("x").id  # the kit's helpers stay usable from plugin tests
