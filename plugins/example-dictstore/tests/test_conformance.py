"""The full memoweave conformance kit against ``dictstore``, created through the registry
(so this also proves the ``memoweave`` entry point is discovered), plus the plugin's own
configuration checks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from memoweave.errors import MemoweaveError, VectorStoreError
from memoweave.plugins import load_registry
from memoweave.providers.vector_store import VectorRecord, VectorStore
from memoweave.testing import VectorStoreConformance


class TestDictStoreConformance(VectorStoreConformance):
    """Every standard test. The one fixture to override is ``store_factory``."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> Callable[[], VectorStore]:
        # dictstore keeps nothing on disk, so tmp_path is unused: each call is a new, empty
        # store and the kit skips the persistence test (capabilities.persistent is False).
        return lambda: load_registry().create("vector_store", "dictstore", {})


def test_registered_through_the_entry_point() -> None:
    info = load_registry().info("vector_store", "dictstore")
    assert info.distribution == "memoweave-example-dictstore"
    assert info.config_model.__name__ == "DictStoreConfig"


def test_unknown_config_key_is_rejected() -> None:
    with pytest.raises(MemoweaveError, match="max_record"):
        load_registry().create("vector_store", "dictstore", {"max_record": 3})


def test_max_records_is_enforced_without_partial_writes() -> None:
    store = load_registry().create("vector_store", "dictstore", {"max_records": 2})
    store.ensure_collection("capped", 2, "dot")
    store.upsert([VectorRecord("a", [1.0, 0.0])])
    batch = [VectorRecord("b", [0.0, 1.0]), VectorRecord("c", [1.0, 1.0])]
    with pytest.raises(VectorStoreError, match="max_records=2"):
        store.upsert(batch)
    assert store.count() == 1
    store.upsert(batch[:1])
    assert store.count() == 2
