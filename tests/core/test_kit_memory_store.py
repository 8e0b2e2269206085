"""The vector store conformance kit against the built-in ``memory`` store (created through
the registry, in memory and persisted). The proof that the kit catches real bugs is in
``test_kit_known_bad_stores.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memoweave.errors import ProviderNotFound
from memoweave.filters import FilterNode, evaluate
from memoweave.plugins import ProviderRegistry, load_registry
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing import VectorStoreConformance, create_provider
from memoweave.testing.filter_cases import FILTER_CASES, FILTER_CORPUS
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
