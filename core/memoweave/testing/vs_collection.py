"""Vector store mixins: empty state, collection binding, and lifecycle (close, reopen, drop)."""

from __future__ import annotations

import pytest

from memoweave.errors import VectorStoreError
from memoweave.providers.vector_store import VectorStore
from memoweave.testing.filter_cases import DIMS, kit_vector
from memoweave.testing.vs_base import StoreFactory, bound_store, ids_of, list_all, record, records


class EmptyStoreTests:
    """A freshly created collection holds nothing."""

    def test_new_collection_is_empty(self, vector_store: VectorStore) -> None:
        """count is 0, list is one empty page, search finds nothing.

        Troubleshooting: the factory must give every test a fresh location (use ``tmp_path``
        or a unique collection/namespace); leftovers from another test or a shared server
        make this fail. ``list`` on an empty collection returns ``Page([], None)``.
        """
        assert vector_store.count() == 0
        page = vector_store.list(limit=10)
        assert page.records == []
        assert page.next_cursor is None
        assert vector_store.search(kit_vector("q"), top_k=5) == []


class CollectionTests:
    """``ensure_collection`` creates, reopens and validates a collection."""

    def test_ensure_collection_is_idempotent(
        self, vector_store: VectorStore, collection_name: str
    ) -> None:
        """Calling ensure_collection again with the same arguments keeps the data.

        Troubleshooting: ``ensure_collection`` must *open* an existing collection, not
        recreate it; check for existence before creating, and compare dims and metric.
        """
        vector_store.upsert([record("a", {"k": 1})])
        vector_store.ensure_collection(collection_name, DIMS, "cosine")
        assert vector_store.count() == 1
        assert ids_of(vector_store.get([record("a").id])) == [record("a").id]

    def test_ensure_collection_rejects_other_dims(
        self, vector_store: VectorStore, collection_name: str
    ) -> None:
        """Reopening a collection with different dims raises VectorStoreError, data kept.

        Troubleshooting: store the collection's dims (and metric) when creating it and
        compare on every ``ensure_collection``; raise ``VectorStoreError`` (not ValueError or
        the engine's own exception). A failed call must not drop or alter the collection.
        """
        vector_store.upsert([record("a")])
        with pytest.raises(VectorStoreError):
            vector_store.ensure_collection(collection_name, DIMS + 1, "cosine")
        vector_store.ensure_collection(collection_name, DIMS, "cosine")
        assert vector_store.count() == 1

    def test_ensure_collection_rejects_other_metric(
        self, vector_store: VectorStore, collection_name: str
    ) -> None:
        """Reopening a cosine collection as ``dot`` raises VectorStoreError.

        Troubleshooting: persist the metric with the collection (engine metadata or a
        side record) and compare it in ``ensure_collection``.
        """
        with pytest.raises(VectorStoreError):
            vector_store.ensure_collection(collection_name, DIMS, "dot")


class LifecycleTests:
    """close, reopen and drop."""

    def test_close_is_idempotent(self, store_factory: StoreFactory, collection_name: str) -> None:
        """Closing twice raises nothing.

        Troubleshooting: guard ``close`` with a flag and make the second call a no-op; do
        not call the engine client's close twice.
        """
        store = bound_store(store_factory, collection_name)
        store.upsert([record("a")])
        store.close()
        store.close()

    def test_persists_across_close_and_reopen(
        self, store_factory: StoreFactory, collection_name: str
    ) -> None:
        """With ``capabilities.persistent``, a reopened store sees everything written.

        Troubleshooting: flush or commit pending writes in ``close`` (and after each write
        if the engine buffers), and make the factory open the *same* location on every call
        within a test. Stores that keep data in memory only must not claim ``persistent``.
        """
        store = bound_store(store_factory, collection_name)
        try:
            if not store.capabilities.persistent:
                pytest.skip("store does not claim capabilities.persistent")
            written = records("persist", 5, user_id="alice", text="persisted é 漢字")
            store.upsert(written)
            store.delete([written[0].id])
        finally:
            store.close()
        reopened = bound_store(store_factory, collection_name)
        try:
            assert reopened.count() == 4
            got = reopened.get([r.id for r in written])
            assert ids_of(got) == [r.id for r in written[1:]]
            assert [g.payload for g in got] == [r.payload for r in written[1:]]
            hits = reopened.search(written[2].vector, top_k=1)
            assert ids_of(hits) == [written[2].id]
        finally:
            reopened.close()

    def test_drop_collection_empties_it(
        self, vector_store: VectorStore, collection_name: str
    ) -> None:
        """After drop_collection + ensure_collection the collection is empty and usable.

        Troubleshooting: ``drop_collection`` deletes the engine collection (or all its rows)
        and keeps the binding; the next ``ensure_collection`` recreates it empty. Reset any
        cached counters or id maps too.
        """
        vector_store.upsert(records("drop", 6, user_id="alice"))
        vector_store.drop_collection()
        vector_store.ensure_collection(collection_name, DIMS, "cosine")
        assert vector_store.count() == 0
        assert list_all(vector_store) == []
        assert vector_store.search(kit_vector("q"), top_k=3) == []
        vector_store.upsert([record("after-drop")])
        assert vector_store.count() == 1
