"""The vector store conformance kit against the built-in ``memory`` store (created through
the registry, in memory and persisted), plus proof that the kit catches real bugs: each
deliberately broken subclass of the store must fail the standard test aimed at that bug."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from memoweave.errors import ProviderNotFound
from memoweave.filters import And, FilterNode, Not, Or, evaluate
from memoweave.plugins import ProviderRegistry, load_registry
from memoweave.providers.vector_store import Page, SearchHit, VectorStore
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing import VectorStoreConformance, create_provider
from memoweave.testing.filter_cases import DIMS, FILTER_CASES, FILTER_CORPUS
from memoweave.testing.vs_base import StoreFactory


@pytest.fixture(scope="module")
def kit_memory_registry() -> ProviderRegistry:
    return load_registry()


class TestMemoryStoreConformance(VectorStoreConformance):
    """In process memory only: ``persistent`` is False, so the reopen test is skipped."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path, kit_memory_registry: ProviderRegistry) -> StoreFactory:
        return lambda: kit_memory_registry.create("vector_store", "memory", {})


class TestPersistentMemoryStoreConformance(VectorStoreConformance):
    """Saved under ``tmp_path``: the kit closes and reopens it at the same location."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path, kit_memory_registry: ProviderRegistry) -> StoreFactory:
        config = {"path": str(tmp_path / "store")}
        return lambda: kit_memory_registry.create("vector_store", "memory", config)


def test_filter_dataset_is_large_and_discriminating() -> None:
    assert len(FILTER_CORPUS) >= 20
    assert len(FILTER_CASES) >= 40
    payloads = [p for _, _, p in FILTER_CORPUS]
    sizes = [sum(evaluate(_parse(c.spec), p) for p in payloads) for c in FILTER_CASES]
    assert sum(1 for s in sizes if 0 < s < len(payloads)) >= 40  # most cases split the corpus
    assert {"user_id", "agent_id", "run_id", "actor_id"} <= {k for p in payloads for k in p}


def test_create_provider_goes_through_the_registry() -> None:
    store = create_provider("vector_store", "memory", {})
    assert isinstance(store, InMemoryVectorStore)
    with pytest.raises(ProviderNotFound):
        create_provider("vector_store", "no-such-store")


def _parse(spec: Any) -> FilterNode | None:
    from memoweave.filters import parse_filter

    return parse_filter(spec)


# --- deliberately broken stores -------------------------------------------------------


def _naive(node: FilterNode | None, payload: dict[str, Any]) -> bool:
    """Python-equality filtering: True == 1 and missing fields fail ``ne`` (both wrong)."""
    if node is None:
        return True
    if isinstance(node, And):
        return all(_naive(c, payload) for c in node.children)
    if isinstance(node, Or):
        return any(_naive(c, payload) for c in node.children)
    if isinstance(node, Not):
        return not _naive(node.child, payload)
    if node.op == "eq":
        return node.field in payload and payload[node.field] == node.value
    if node.op == "ne":
        return node.field in payload and payload[node.field] != node.value
    return evaluate(node, payload)


class NaiveFilterStore(InMemoryVectorStore):
    def count(self, *, filter: FilterNode | None = None) -> int:
        return sum(_naive(filter, r.payload) for r in super().list(limit=10_000).records)


class DistanceScoreStore(InMemoryVectorStore):
    def search(self, vector: Any, *, top_k: int = 10, filter: Any = None) -> list[SearchHit]:
        hits = super().search(vector, top_k=top_k, filter=filter)
        return [dataclasses.replace(h, score=1.0 - h.score) for h in hits]


class PostFilterStore(InMemoryVectorStore):
    def search(self, vector: Any, *, top_k: int = 10, filter: Any = None) -> list[SearchHit]:
        hits = super().search(vector, top_k=top_k)
        return [h for h in hits if evaluate(filter, h.payload)]


class MergingUpdateStore(InMemoryVectorStore):
    def update(self, id: str, *, vector: Any = None, payload: Any = None) -> None:
        if payload is not None:
            [old] = self.get([id])
            payload = {**old.payload, **payload}
        super().update(id, vector=vector, payload=payload)


class MutatingStore(InMemoryVectorStore):
    def upsert(self, records: Any) -> None:
        for r in records:
            r.payload.setdefault("_indexed", True)
        super().upsert(records)


class EmptyLastPageStore(InMemoryVectorStore):
    """Returns a cursor to an extra empty page instead of ``None`` on the last page."""

    def list(self, *, filter: Any = None, limit: int = 100, cursor: Any = None) -> Page:
        if cursor == "past-the-end":
            return Page([], None)
        page = super().list(filter=filter, limit=limit, cursor=cursor)
        return Page(page.records, page.next_cursor or "past-the-end")


BUGS: list[tuple[type[VectorStore], str, str]] = [
    (NaiveFilterStore, "test_filter_equality", "eq_int_is_not_bool"),
    (NaiveFilterStore, "test_filter_equality", "ne_str_includes_missing"),
    (DistanceScoreStore, "test_exact_match_ranks_first", "distance"),
    (DistanceScoreStore, "test_cosine_scores_are_exact_and_descending", "not descending"),
    (PostFilterStore, "test_filtered_search_fills_top_k", "hits for top_k=3"),
    (MergingUpdateStore, "test_update_payload_only_replaces_whole_payload", "merged"),
    (MutatingStore, "test_inputs_are_not_mutated", "mutated"),
    (EmptyLastPageStore, "test_list_pages_through_every_record_once", "page sizes"),
]


@pytest.mark.parametrize(("store_cls", "test_name", "expected"), BUGS)
def test_kit_catches_broken_store(
    store_cls: type[VectorStore], test_name: str, expected: str
) -> None:
    store = store_cls()
    store.ensure_collection("kit_broken", DIMS, "cosine")
    try:
        with pytest.raises(AssertionError) as info:
            getattr(VectorStoreConformance(), test_name)(store)
    finally:
        store.close()
    assert expected in str(info.value)
