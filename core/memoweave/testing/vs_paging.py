"""Vector store mixins: list pagination and count."""

from __future__ import annotations

from memoweave.filters import Comparison, parse_filter
from memoweave.providers.vector_store import VectorStore
from memoweave.testing.vs_base import MAX_PAGES, ids_of, list_all, record, records


def _pages(store: VectorStore, limit: int, **kwargs: object) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = store.list(limit=limit, cursor=cursor, **kwargs)  # type: ignore[arg-type]  # filter=
        pages.append(ids_of(page.records))
        cursor = page.next_cursor
        if cursor is None:
            return pages
        assert isinstance(cursor, str), f"next_cursor must be a str or None, got {cursor!r}"
    raise AssertionError("list never returned next_cursor=None")


class PaginationTests:
    """list pages through every matching record exactly once."""

    def test_list_pages_through_every_record_once(self, vector_store: VectorStore) -> None:
        """23 records at limit 5: pages of 5,5,5,5,3, each id once, last cursor None.

        Troubleshooting: use a stable sort key (the id, or an engine offset that cannot
        shift) and encode the position in the opaque cursor; return ``None`` as soon as
        the page is the last one instead of a cursor to an empty page.
        """
        batch = records("page", 23, user_id="alice")
        vector_store.upsert(batch)
        pages = _pages(vector_store, 5)
        sizes = [len(p) for p in pages]
        assert sizes == [5, 5, 5, 5, 3], f"page sizes {sizes} for 23 records at limit 5"
        flat = [i for p in pages for i in p]
        assert len(set(flat)) == len(flat), "a record was listed twice"
        assert sorted(flat) == sorted(r.id for r in batch)

    def test_list_ends_on_an_exactly_full_page(self, vector_store: VectorStore) -> None:
        """20 records at limit 5 are 4 full pages, the 4th with ``next_cursor=None``; the
        same with a filter (14 of 24 records at limit 7).

        Troubleshooting: a full page is not proof that more follow: fetch ``limit + 1``
        rows (or ask the engine whether one more exists) and hand out a cursor only when
        one did, instead of a cursor to an empty page.
        """
        batch = [record(f"full-{i}", {"user_id": "alice" if i % 2 else "bob"}) for i in range(20)]
        vector_store.upsert(batch)
        sizes = [len(p) for p in _pages(vector_store, 5)]
        assert sizes == [5, 5, 5, 5], f"page sizes {sizes} for 20 records at limit 5"
        vector_store.upsert([record(f"full-{i}", {"user_id": "bob"}) for i in range(20, 24)])
        node = parse_filter({"user_id": "bob"})
        sizes = [len(p) for p in _pages(vector_store, 7, filter=node)]
        assert sizes == [7, 7], f"page sizes {sizes} for 14 matching records at limit 7"

    def test_list_with_filter_pages_matching_records(self, vector_store: VectorStore) -> None:
        """Paging with a filter returns each matching record once and nothing else.

        Troubleshooting: apply the filter before paging (cursor positions must refer to
        the filtered sequence); a post-filtered page may be short but must not skip
        records.
        """
        batch = [
            record(f"fp-{i}", {"user_id": "alice" if i % 3 else "bob", "i": i}) for i in range(33)
        ]
        vector_store.upsert(batch)
        node = parse_filter({"user_id": "alice"})
        pages = _pages(vector_store, 4, filter=node)
        flat = [i for p in pages for i in p]
        expected = sorted(r.id for r in batch if r.payload["user_id"] == "alice")
        assert len(flat) == len(set(flat)) == len(expected)
        assert sorted(flat) == expected
        assert all(len(p) <= 4 for p in pages)

    def test_list_order_is_stable(self, vector_store: VectorStore) -> None:
        """Two full passes list records in the same order; payloads are returned.

        Troubleshooting: do not rely on hash-map iteration or engine scan order that
        changes between calls; sort by a key that does not change.
        """
        batch = records("stable", 12, user_id="alice")
        vector_store.upsert(batch)
        first, second = list_all(vector_store, limit=5), list_all(vector_store, limit=5)
        assert ids_of(first) == ids_of(second)
        by_id = {r.id: r.payload for r in batch}
        assert all(r.payload == by_id[r.id] for r in first)

    def test_count_agrees_with_list(self, vector_store: VectorStore) -> None:
        """count() and count(filter) equal the number of records list returns.

        Troubleshooting: engines with approximate counts need an exact count query; count
        after the last write is visible (flush or wait for consistency).
        """
        batch = [record(f"cnt-{i}", {"user_id": "alice" if i < 7 else "bob"}) for i in range(11)]
        vector_store.upsert(batch)
        node = parse_filter({"user_id": "bob"})
        assert vector_store.count() == len(list_all(vector_store)) == 11
        assert vector_store.count(filter=node) == len(list_all(vector_store, filter=node)) == 4

    def test_has_records_agrees_with_list(self, vector_store: VectorStore) -> None:
        """has_records() and has_records(filter) say whether list finds a record: false
        on an empty collection and for a filter nothing matches, true otherwise.

        Troubleshooting: an override must apply the filter exactly like list (post-filter
        what the engine cannot express) and see the last write.
        """
        assert not vector_store.has_records()
        vector_store.upsert([record(f"has-{i}", {"user_id": "alice", "i": i}) for i in range(3)])
        assert vector_store.has_records()
        assert vector_store.has_records(filter=parse_filter({"user_id": "alice"}))
        assert not vector_store.has_records(filter=parse_filter({"user_id": "bob"}))
        assert vector_store.has_records(filter=parse_filter({"i": {"gte": 2}}))
        assert not vector_store.has_records(filter=parse_filter({"i": {"gt": 2}}))
        vector_store.expect_reads(Comparison("user_id", "eq", "bob"))  # a hint changes nothing
        assert vector_store.has_records(filter=parse_filter({"user_id": "alice"}))
