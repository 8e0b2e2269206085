"""The vector store kit catches the bugs its docs name: each known-bad store below (the
built-in store with one realistic bug) must fail the standard test aimed at that bug, with
a message naming it; the kit's own fixtures are checked as well.

The catch rate is every row of ``BUGS``: a bug the kit stops catching fails here.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import struct
from typing import Any

import pytest

import memoweave.testing as kit
from memoweave.filters import And, FilterNode, Not, Or, evaluate
from memoweave.providers.vector_store import Page, SearchHit, VectorRecord, VectorStore
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing import VectorStoreConformance
from memoweave.testing.filter_cases import DIMS

pytest_plugins = ("pytester",)


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


class FullPageCursorStore(InMemoryVectorStore):
    """Hands out a cursor whenever a page is full (``len(rows) == limit``), so an exactly
    full last page is followed by an empty one."""

    def list(self, *, filter: Any = None, limit: int = 100, cursor: Any = None) -> Page:
        if cursor == "after-full-page":
            return Page([], None)
        page = super().list(filter=filter, limit=limit, cursor=cursor)
        if page.next_cursor is None and len(page.records) == limit:
            return Page(page.records, "after-full-page")
        return page


class PaddingStore(InMemoryVectorStore):
    """Pads or truncates a vector of the wrong length (as some engines do) on upsert."""

    def upsert(self, records: Any) -> None:
        fitted = [
            VectorRecord(r.id, (list(r.vector) + [0.0] * DIMS)[:DIMS], r.payload)
            if isinstance(r, VectorRecord) and isinstance(r.vector, list)
            else r
            for r in records
        ]
        super().upsert(fitted)


class UntypedPayloadErrorStore(InMemoryVectorStore):
    """Lets the payload reach the "engine", which raises its own ``TypeError``."""

    def upsert(self, records: Any) -> None:
        for r in records:
            dict(r.payload.items())  # AttributeError/TypeError for a non-dict
        super().upsert(records)


class NanPayloadStore(InMemoryVectorStore):
    """Accepts a NaN in a payload (JSON encoders often write it as ``NaN``)."""

    def upsert(self, records: Any) -> None:
        clean = [
            VectorRecord(
                r.id,
                r.vector,
                {
                    k: None if isinstance(v, float) and math.isnan(v) else v
                    for k, v in r.payload.items()
                },
            )
            if isinstance(r, VectorRecord) and isinstance(r.payload, dict)
            else r
            for r in records
        ]
        super().upsert(clean)


class ChunkedWriteStore(InMemoryVectorStore):
    """Checks and writes 500 records at a time: a bad record in a later chunk leaves the
    earlier chunks written."""

    def upsert(self, records: Any) -> None:
        for start in range(0, len(records), 500):
            super().upsert(records[start : start + 500])


class OneByOneStore(InMemoryVectorStore):
    """Writes each record as soon as it is checked."""

    def upsert(self, records: Any) -> None:
        for r in records:
            super().upsert([r])


class SplittingIdsStore(InMemoryVectorStore):
    """``get("abc")`` looks up "a", "b" and "c" instead of refusing a bare string."""

    def get(self, ids: Any, *, with_vectors: bool = False) -> list[Any]:
        return super().get(list(ids), with_vectors=with_vectors)


class ZeroTopKStore(InMemoryVectorStore):
    """``top_k=0`` returns nothing instead of raising (engines read 0 as "no hits")."""

    def search(self, vector: Any, *, top_k: int = 10, filter: Any = None) -> list[SearchHit]:
        if top_k == 0:
            return []
        return super().search(vector, top_k=top_k, filter=filter)


class UnboundDeleteStore(InMemoryVectorStore):
    """``delete`` reaches a missing collection attribute before the binding check."""

    def delete(self, ids: Any) -> None:
        if self._bound is None:
            raise AttributeError("'NoneType' object has no attribute 'name'")
        super().delete(ids)


class UsableAfterCloseStore(InMemoryVectorStore):
    """``count`` still answers (0) after ``close`` instead of raising."""

    def count(self, *, filter: Any = None) -> int:
        return 0 if self._closed else super().count(filter=filter)


class Float32PayloadStore(InMemoryVectorStore):
    """Keeps payload floats in a float32 column: 0.1 and epoch timestamps change."""

    def upsert(self, records: Any) -> None:
        super().upsert([_mapped(r, _float32) for r in records])


class DoubleIntPayloadStore(InMemoryVectorStore):
    """Parses payload JSON into doubles (as JavaScript does): large integers change."""

    def upsert(self, records: Any) -> None:
        super().upsert([_mapped(r, _through_double) for r in records])


class VarcharTextStore(InMemoryVectorStore):
    """Keeps strings in a VARCHAR(4096) column, cutting longer memory texts."""

    def upsert(self, records: Any) -> None:
        super().upsert(
            [_mapped(r, lambda v: v[:4096] if isinstance(v, str) else v) for r in records]
        )


class StaleFilterIndexStore(InMemoryVectorStore):
    """Filters searches on copies of the payload made at a record's first insert
    (update and re-upsert do not rewrite the filter index)."""

    def __init__(self) -> None:
        super().__init__()
        self._first: dict[str, dict[str, Any]] = {}

    def upsert(self, records: Any) -> None:
        super().upsert(records)
        for r in records:
            self._first.setdefault(r.id, dict(r.payload))

    def search(self, vector: Any, *, top_k: int = 10, filter: Any = None) -> list[SearchHit]:
        super().search(vector, top_k=top_k, filter=filter)  # the checks
        hits = super().search(vector, top_k=10_000)
        kept = [h for h in hits if filter is None or evaluate(filter, self._first[h.id])]
        return kept[:top_k]


class FirstInsertKeywordStore(InMemoryVectorStore):
    """Writes its keyword index on a record's first insert only: deletes, updates and
    re-upserts leave the old text searchable."""

    def __init__(self) -> None:
        super().__init__()
        self._index = InMemoryVectorStore()

    def ensure_collection(self, name: str, dims: int, metric: Any = "cosine") -> None:
        super().ensure_collection(name, dims, metric)
        self._index.ensure_collection(name, dims, metric)

    def upsert(self, records: Any) -> None:
        super().upsert(records)
        known = {r.id for r in self._index.get([r.id for r in records])}
        self._index.upsert([r for r in records if r.id not in known])

    def keyword_search(self, text: Any, *, top_k: int = 10, filter: Any = None) -> list[SearchHit]:
        super().keyword_search(text, top_k=top_k, filter=filter)  # the checks
        return self._index.keyword_search(text, top_k=top_k, filter=filter)


def _mapped(r: Any, value: Any) -> Any:
    """``r`` with ``value`` applied to each top-level payload value (bad records as they are)."""
    if not isinstance(r, VectorRecord) or not isinstance(r.payload, dict):
        return r
    return VectorRecord(r.id, r.vector, {k: value(v) for k, v in r.payload.items()})


def _float32(v: Any) -> Any:
    return (
        struct.unpack("f", struct.pack("f", v))[0] if type(v) is float and math.isfinite(v) else v
    )


def _through_double(v: Any) -> Any:
    return int(float(v)) if type(v) is int and abs(v) < 2**62 else v


BUGS: list[tuple[type[VectorStore], str, str]] = [
    (NaiveFilterStore, "test_filter_equality", "eq_int_is_not_bool"),
    (NaiveFilterStore, "test_filter_equality", "ne_str_includes_missing"),
    (DistanceScoreStore, "test_exact_match_ranks_first", "distance"),
    (DistanceScoreStore, "test_cosine_scores_are_exact_and_descending", "not descending"),
    (PostFilterStore, "test_filtered_search_fills_top_k", "hits for top_k=3"),
    (MergingUpdateStore, "test_update_payload_only_replaces_whole_payload", "merged"),
    (MutatingStore, "test_inputs_are_not_mutated", "mutated"),
    (EmptyLastPageStore, "test_list_pages_through_every_record_once", "page sizes"),
    (FullPageCursorStore, "test_list_ends_on_an_exactly_full_page", "[5, 5, 5, 5, 0]"),
    (PaddingStore, "test_bad_vectors_are_refused", "upsert of a vector with one too long"),
    (UntypedPayloadErrorStore, "test_bad_payloads_are_refused", "raised AttributeError"),
    (NanPayloadStore, "test_bad_payloads_are_refused", "a NaN value raised nothing"),
    (ChunkedWriteStore, "test_a_refused_batch_writes_nothing", "1,201-record batch was partly"),
    (OneByOneStore, "test_a_refused_batch_writes_nothing", "was partly written"),
    (SplittingIdsStore, "test_bad_ids_are_refused", "get with ids=str raised nothing"),
    (ZeroTopKStore, "test_bad_counts_and_cursors_are_refused", "search top_k zero"),
    (UnboundDeleteStore, "test_calls_before_ensure_collection_raise", "delete on an unbound"),
    (UsableAfterCloseStore, "test_calls_before_ensure_collection_raise", "count on a closed"),
    (Float32PayloadStore, "test_upsert_then_get_round_trips", "'tenth'"),
    (DoubleIntPayloadStore, "test_upsert_then_get_round_trips", "'past_double'"),
    (VarcharTextStore, "test_long_memory_text_round_trips", "get returned a different (cut?)"),
    (StaleFilterIndexStore, "test_filters_follow_payload_changes", "user_id=alice status=active"),
    (
        FirstInsertKeywordStore,
        "test_keyword_search_follows_deletes_and_updates",
        "for 'hiking' found ['kw-0', 'kw-2']",
    ),
]


def _run_standard_test(store_cls: type[VectorStore], test_name: str) -> None:
    """Run one standard test on a ``store_cls`` as pytest would (its fixtures by name)."""
    test = getattr(VectorStoreConformance(), test_name)
    wanted = inspect.signature(test).parameters
    if "vector_store" in wanted:
        store = store_cls()
        store.ensure_collection("kit_broken", DIMS, "cosine")
        try:
            test(store)
        finally:
            store.close()
    else:
        kwargs = {"store_factory": store_cls, "collection_name": "kit_broken"}
        test(**{name: kwargs[name] for name in wanted})


@pytest.mark.parametrize(("store_cls", "test_name", "expected"), BUGS)
def test_kit_catches_known_bad_store(
    store_cls: type[VectorStore], test_name: str, expected: str
) -> None:
    with pytest.raises(AssertionError) as info:
        _run_standard_test(store_cls, test_name)
    assert expected in str(info.value)


@pytest.mark.parametrize("test_name", sorted({name for _, name, _ in BUGS}))
def test_the_aimed_tests_pass_on_the_correct_store(test_name: str) -> None:
    _run_standard_test(InMemoryVectorStore, test_name)


MISUSED_FIXTURE = """
import pytest
from memoweave.plugins import load_registry
from memoweave.testing import {suite}


class TestStoreInstance({suite}):
    @pytest.fixture
    def {fixture}(self, tmp_path):
        return load_registry().create("{kind}", "memory", {{}})  # not a callable
"""
SUITES = [
    ("VectorStoreConformance", "store_factory", "vector_store", "InMemoryVectorStore"),
    ("GraphStoreConformance", "graph_factory", "graph_store", "InMemoryGraphStore"),
]


@pytest.mark.parametrize(("suite", "fixture", "kind", "built"), SUITES)
def test_a_non_callable_factory_is_reported_once(
    pytester: pytest.Pytester, suite: str, fixture: str, kind: str, built: str
) -> None:
    """One error saying what to fix; every other standard test skipped, pointing at it."""
    source = MISUSED_FIXTURE.format(suite=suite, fixture=fixture, kind=kind)
    pytester.makepyfile(test_misuse=source)
    result = pytester.runpytest_inprocess(
        "-q", "-p", "no:cacheprovider", "-o", "asyncio_default_fixture_loop_scope=function"
    )
    outcomes = result.parseoutcomes()
    standard = len([n for n in dir(getattr(kit, suite)) if n.startswith("test_")])
    # the guard test needs no factory and passes
    assert outcomes == {"errors": 1, "skipped": standard - 2, "passed": 1}, outcomes
    result.stdout.fnmatch_lines(
        [f"*`{fixture}` returned an instance of {built}, not a zero-argument callable*"]
    )
    assert "TypeError" not in result.stdout.str()
