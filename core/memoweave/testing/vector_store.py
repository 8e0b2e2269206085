"""``VectorStoreConformance``: the standard suite every vector store plugin runs.

Subclass it and override one fixture::

    class TestMyStore(VectorStoreConformance):
        @pytest.fixture
        def store_factory(self, tmp_path):
            config = {"path": str(tmp_path / "db")}
            return lambda: load_registry().create("vector_store", "mystore", config)

The callable must build an unbound store through the registry, at the same location on
every call within a test (the kit closes and reopens it) and a fresh location per test.
Optional behaviour is skipped from ``store.capabilities`` (``persistent``,
``keyword_search``, which indexes ``payload[TEXT_FIELD]``, i.e. ``"memory"``).
"""

from __future__ import annotations

from memoweave.testing.guard import StandardTests
from memoweave.testing.vs_base import VectorStoreFixtures
from memoweave.testing.vs_collection import CollectionTests, EmptyStoreTests, LifecycleTests
from memoweave.testing.vs_filters import FilterTests, ScopeIsolationTests
from memoweave.testing.vs_invalid import InvalidInputTests
from memoweave.testing.vs_paging import PaginationTests
from memoweave.testing.vs_records import GetDeleteTests, UpdateTests, UpsertTests
from memoweave.testing.vs_search import KeywordSearchTests, SearchTests
from memoweave.testing.vs_threads import ThreadSafetyTests


class VectorStoreConformance(
    EmptyStoreTests,
    CollectionTests,
    UpsertTests,
    GetDeleteTests,
    UpdateTests,
    SearchTests,
    KeywordSearchTests,
    FilterTests,
    ScopeIsolationTests,
    PaginationTests,
    InvalidInputTests,
    LifecycleTests,
    ThreadSafetyTests,
    VectorStoreFixtures,
    StandardTests,
):
    """Every standard vector store test; override the ``store_factory`` fixture."""

    _kit_suite = True


__all__ = ["VectorStoreConformance"]
