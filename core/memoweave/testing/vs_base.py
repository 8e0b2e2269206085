"""Fixtures and helpers shared by the vector store mixins.

The implementer overrides one fixture, ``store_factory(self, tmp_path)``: it returns a
zero-argument callable that builds an *unbound* store through the registry, at the same
location on every call within one test and at a fresh location for every test. The kit binds
it with ``ensure_collection`` itself; ``vector_store`` is that bound store, closed afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from memoweave.filters.ast import FilterNode
from memoweave.providers.vector_store import Metric, StoredRecord, VectorRecord, VectorStore
from memoweave.testing.filter_cases import DIMS, kit_id, kit_vector
from memoweave.testing.guard import check_built, check_factory_fixture

StoreFactory = Callable[[], VectorStore]

#: Safety bound on the number of pages ``list_all`` follows before declaring a cursor loop.
MAX_PAGES = 10_000


class VectorStoreFixtures:
    """The fixtures every vector store mixin uses."""

    @pytest.fixture
    def store_factory(self, tmp_path: Any) -> StoreFactory:
        """Override me: return ``lambda: load_registry().create("vector_store", name, cfg)``."""
        pytest.fail(
            "Override the `store_factory(self, tmp_path)` fixture in your VectorStoreConformance "
            "subclass: return a zero-argument callable building your store through "
            "memoweave.plugins.load_registry().create('vector_store', '<name>', {...})."
        )

    @pytest.fixture(autouse=True)
    def _kit_checks_store_factory(self, request: pytest.FixtureRequest) -> None:
        """The factory fixture is a callable (one clear failure per class if not)."""
        check_factory_fixture(request, ("async_store_factory", "store_factory"), "store")

    @pytest.fixture
    def collection_name(self) -> str:
        """A collection name unique to the test (``kit_<10 hex>``)."""
        return f"kit_{uuid.uuid4().hex[:10]}"

    @pytest.fixture
    def vector_store(
        self, store_factory: StoreFactory, collection_name: str
    ) -> Iterator[VectorStore]:
        """A store bound to a fresh cosine collection of ``DIMS`` dimensions; closed afterwards."""
        store = new_store(store_factory)
        try:
            store.ensure_collection(collection_name, DIMS, "cosine")
            yield store
        finally:
            store.close()


def record(
    label: str, payload: dict[str, Any] | None = None, vector: Sequence[float] | None = None
) -> VectorRecord:
    """A record whose id and (by default) vector derive from ``label``."""
    return VectorRecord(
        id=kit_id(label),
        vector=list(vector) if vector is not None else kit_vector(label),
        payload=dict(payload or {}),
    )


def records(prefix: str, n: int, **payload: Any) -> list[VectorRecord]:
    """``n`` records labelled ``<prefix>-<i>`` with ``payload`` plus ``{"i": i}``."""
    return [record(f"{prefix}-{i}", {**payload, "i": i}) for i in range(n)]


def list_all(
    store: VectorStore, *, filter: FilterNode | None = None, limit: int = 100
) -> list[StoredRecord]:
    """Follow ``next_cursor`` until ``None`` and return every record listed."""
    out: list[StoredRecord] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = store.list(filter=filter, limit=limit, cursor=cursor)
        assert len(page.records) <= limit, (
            f"list returned {len(page.records)} records for limit={limit}"
        )
        out.extend(page.records)
        cursor = page.next_cursor
        if cursor is None:
            return out
    raise AssertionError(f"list never returned next_cursor=None after {MAX_PAGES} pages")


def ids_of(items: Sequence[Any]) -> list[str]:
    """The ``id`` of each record or hit."""
    return [item.id for item in items]


def new_store(factory: StoreFactory) -> VectorStore:
    """A new, unbound store from ``factory``, checked to be a :class:`VectorStore`."""
    return check_built(factory(), VectorStore, "store_factory")  # type: ignore[no-any-return]  # or its Blocking view


def bound_store(factory: StoreFactory, name: str, metric: Metric = "cosine") -> VectorStore:
    """A new store instance from ``factory`` bound to collection ``name``."""
    store = new_store(factory)
    try:
        store.ensure_collection(name, DIMS, metric)
    except BaseException:
        store.close()
        raise
    return store
