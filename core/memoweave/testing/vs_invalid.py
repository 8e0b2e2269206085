"""Vector store mixin: invalid input is refused with the contract's error class, and a
refused call writes nothing.

The classes are those of :mod:`memoweave.providers.store_checks`: ``ValidationError`` for
an argument the contract does not allow, ``VectorStoreError`` for a store that is not
bound or already closed. Stores get those checks by calling the functions of that module.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from memoweave.errors import MemoweaveError, ValidationError, VectorStoreError
from memoweave.providers.vector_store import VectorRecord, VectorStore
from memoweave.testing.filter_cases import DIMS, kit_id, kit_vector
from memoweave.testing.vs_base import StoreFactory, ids_of, list_all, new_store, record, records

#: Vectors no store may accept (wrong length, non-numbers, non-finite).
BAD_VECTORS: dict[str, Any] = {
    "one too long": [0.1] * (DIMS + 1),
    "one too short": [0.1] * (DIMS - 1),
    "empty": [],
    "a string": "0.1" * DIMS,
    "string items": ["0.1"] * DIMS,
    "bool items": [True] * DIMS,
    "a NaN": [math.nan] + [0.1] * (DIMS - 1),
    "an infinity": [0.1] * (DIMS - 1) + [math.inf],
    "nested lists": [[0.1]] * DIMS,
}
#: Payloads no store may accept (not a dict, keys outside the contract, non-JSON values).
BAD_PAYLOADS: dict[str, Any] = {
    "a list": [("user_id", "alice")],
    "a string": "user_id=alice",
    "None": None,
    "an int key": {1: "x"},
    "a key with a dash": {"user-id": "alice"},
    "an empty key": {"": 1},
    "a set value": {"tags": {"a", "b"}},
    "a bytes value": {"blob": b"\x00\x01"},
    "an object value": {"when": object()},
    "a NaN value": {"ratio": math.nan},
    "an infinity in a list": {"nums": [1.0, math.inf]},
    "a non-str nested key": {"nested": {1: "x"}},
    "an int beyond 64 bits": {"n": 2**64},
    "a negative int beyond 64 bits in a list": {"nums": [1, -(2**63) - 1]},
}
#: Record ids no store may accept.
BAD_IDS: dict[str, Any] = {"an int": 123, "empty": "", "None": None, "bytes": b"id"}
#: ``top_k`` / ``limit`` values no store may accept.
BAD_COUNTS: dict[str, Any] = {"zero": 0, "negative": -1, "a bool": True, "a float": 2.5}


def _raises(cls: type[MemoweaveError], what: str, call: Any, *args: Any, **kwargs: Any) -> None:
    """``call(*args, **kwargs)`` raises ``cls``; else an assertion naming ``what``."""
    try:
        call(*args, **kwargs)
    except cls:
        return
    except Exception as exc:
        raise AssertionError(
            f"{what} raised {type(exc).__name__} ({exc}), expected {cls.__name__}"
        ) from exc
    raise AssertionError(f"{what} raised nothing, expected {cls.__name__}")


def _unchanged(store: VectorStore, kept: VectorRecord, what: str) -> None:
    [got] = store.get([kept.id], with_vectors=True)
    assert got.payload == kept.payload, f"{what} changed the stored payload"
    assert got.vector is not None
    norm = math.sqrt(sum(x * x for x in got.vector)) or 1.0
    ref = math.sqrt(sum(x * x for x in kept.vector)) or 1.0
    cos = sum(a * b for a, b in zip(got.vector, kept.vector, strict=True)) / norm / ref
    assert cos == pytest.approx(1.0, abs=1e-4), f"{what} changed the stored vector"


class InvalidInputTests:
    """Bad arguments raise ``ValidationError``; an unbound or closed store raises
    ``VectorStoreError``; nothing is written by a call that raised."""

    def test_bad_vectors_are_refused(self, vector_store: VectorStore) -> None:
        """A vector of the wrong length, of non-numbers or with NaN/inf is refused by
        upsert, search and update with ``ValidationError``, and nothing changes.

        Troubleshooting: call ``memoweave.providers.store_checks.check_records`` on the
        batch (and ``check_vector`` on search and update vectors) before any engine call;
        engines often truncate, pad or store a wrong-length vector silently, and many
        turn a NaN into a ``null``.
        """
        kept = record("kept", {"user_id": "alice"})
        vector_store.upsert([kept])
        for name, bad in BAD_VECTORS.items():
            what = f"a vector with {name}"
            _raises(
                ValidationError,
                f"upsert of {what}",
                vector_store.upsert,
                [VectorRecord(kit_id(f"bad-{name}"), bad, {"user_id": "alice"})],
            )
            _raises(ValidationError, f"search with {what}", vector_store.search, bad, top_k=1)
            _raises(
                ValidationError, f"update with {what}", vector_store.update, kept.id, vector=bad
            )
        assert vector_store.count() == 1, "a refused upsert wrote a record"
        _unchanged(vector_store, kept, "a refused update")

    def test_bad_payloads_are_refused(self, vector_store: VectorStore) -> None:
        """A payload that is not a dict of ``[A-Za-z_][A-Za-z0-9_]*`` keys to JSON values
        is refused by upsert and update with ``ValidationError``, and nothing changes.

        Troubleshooting: call ``store_checks.check_payload`` (it also returns the deep copy
        to store); do not let the engine's JSON encoder be the check: it raises its own
        ``TypeError``, writes ``NaN`` or turns a set into a list.
        """
        kept = record("kept", {"user_id": "alice", "n": 1})
        vector_store.upsert([kept])
        for name, bad in BAD_PAYLOADS.items():
            what = f"a payload with {name}"
            bad_record = VectorRecord(kit_id(f"bad-{name}"), kit_vector(name), bad)
            _raises(ValidationError, f"upsert of {what}", vector_store.upsert, [bad_record])
            if bad is not None:  # update(payload=None) keeps the payload
                _raises(
                    ValidationError,
                    f"update with {what}",
                    vector_store.update,
                    kept.id,
                    payload=bad,
                )
        assert vector_store.count() == 1, "a refused upsert wrote a record"
        _unchanged(vector_store, kept, "a refused update")

    def test_bad_ids_are_refused(self, vector_store: VectorStore) -> None:
        """Ids that are not non-empty strings, and ``ids`` that are not a list (a bare
        string included), are refused by upsert, get, delete and update.

        Troubleshooting: call ``store_checks.check_ids`` / ``check_id``; a bare string is a
        ``Sequence`` of one-character ids, so ``get("abc")`` must be refused, not split.
        """
        kept = record("kept", {"user_id": "alice"})
        vector_store.upsert([kept])
        for name, bad in BAD_IDS.items():
            what = f"an id that is {name}"
            bad_record = VectorRecord(bad, kit_vector(name), {"user_id": "alice"})
            _raises(ValidationError, f"upsert of {what}", vector_store.upsert, [bad_record])
            _raises(ValidationError, f"get of {what}", vector_store.get, [bad])
            _raises(ValidationError, f"delete of {what}", vector_store.delete, [kept.id, bad])
            _raises(ValidationError, f"update of {what}", vector_store.update, bad, payload={})
        for bad_ids in (kept.id, None, {kept.id: 1}):
            what = f"ids={type(bad_ids).__name__}"
            _raises(ValidationError, f"get with {what}", vector_store.get, bad_ids)
            _raises(ValidationError, f"delete with {what}", vector_store.delete, bad_ids)
        _raises(ValidationError, "upsert of a dict", vector_store.upsert, {"id": kept.id})
        _raises(ValidationError, "upsert of a non-record", vector_store.upsert, [("id", [])])
        assert ids_of(list_all(vector_store)) == [kept.id], "a refused call changed the store"

    def test_bad_counts_and_cursors_are_refused(self, vector_store: VectorStore) -> None:
        """``top_k`` and ``limit`` below 1 (or not an int), an unknown cursor and
        non-str keyword text are refused with ``ValidationError``.

        Troubleshooting: call ``store_checks.check_positive`` before building the engine
        query (engines treat 0 as "no limit" or return everything); refuse a cursor you did
        not hand out with ``store_checks.invalid_cursor``.
        """
        vector_store.upsert(records("n", 3))
        for name, bad in BAD_COUNTS.items():
            _raises(
                ValidationError,
                f"search top_k {name}",
                vector_store.search,
                kit_vector("q"),
                top_k=bad,
            )
            _raises(ValidationError, f"list limit {name}", vector_store.list, limit=bad)
            if vector_store.capabilities.keyword_search:
                _raises(
                    ValidationError,
                    f"keyword top_k {name}",
                    vector_store.keyword_search,
                    "x",
                    top_k=bad,
                )
        for cursor in ("not-a-cursor-\u00e9|=/", 7):
            _raises(
                ValidationError, f"cursor {cursor!r}", vector_store.list, limit=2, cursor=cursor
            )
        if vector_store.capabilities.keyword_search:
            _raises(ValidationError, "keyword text None", vector_store.keyword_search, None)

    def test_a_refused_batch_writes_nothing(self, vector_store: VectorStore) -> None:
        """A batch with one bad record anywhere (also past the first engine-sized chunk)
        writes none of its records.

        Troubleshooting: validate the whole batch before the first engine call (split
        into chunks only after ``store_checks.check_records`` returned); a store that
        checks each chunk as it sends it leaves the earlier chunks written.
        """
        good = records("batch", 3, user_id="alice")
        bad_ones = {
            "a wrong-length vector": VectorRecord(kit_id("bad-v"), [0.1] * (DIMS + 1), {}),
            "a non-dict payload": VectorRecord(kit_id("bad-p"), kit_vector("p"), "x"),  # type: ignore[arg-type]  # bad
            "a non-JSON payload": VectorRecord(kit_id("bad-j"), kit_vector("j"), {"s": {1}}),
            "a bad id": VectorRecord(42, kit_vector("i"), {}),  # type: ignore[arg-type]  # bad: the point
        }
        for name, bad in bad_ones.items():
            for batch in ([*good, bad], [good[0], bad, *good[1:]]):
                _raises(ValidationError, f"a batch with {name}", vector_store.upsert, batch)
                assert vector_store.count() == 0, f"a batch with {name} was partly written"
        big = records("big", 1200, user_id="alice")
        big.append(bad_ones["a wrong-length vector"])
        _raises(ValidationError, "a 1,201-record batch", vector_store.upsert, big)
        assert vector_store.count() == 0, "a refused 1,201-record batch was partly written"
        assert vector_store.get([big[0].id, big[-2].id]) == []

    def test_calls_before_ensure_collection_raise(self, store_factory: StoreFactory) -> None:
        """Every method of an unbound store, and of a closed one, raises
        ``VectorStoreError`` (never ``AttributeError``/``TypeError``), even with valid
        arguments.

        Troubleshooting: keep the bound collection in an attribute set only by
        ``ensure_collection`` and check it (and a closed flag) at the top of every method;
        raise ``store_checks.not_bound(...)`` / ``store_checks.closed(...)``.
        """
        rec = record("a")
        calls: dict[str, Any] = {
            "count": lambda s: s.count(),
            "search": lambda s: s.search(rec.vector, top_k=3),
            "upsert": lambda s: s.upsert([rec]),
            "get": lambda s: s.get([rec.id]),
            "delete": lambda s: s.delete([rec.id]),
            "update": lambda s: s.update(rec.id, payload={"k": 1}),
            "list": lambda s: s.list(limit=5),
            "drop_collection": lambda s: s.drop_collection(),
        }
        store = new_store(store_factory)
        try:
            if store.capabilities.keyword_search:
                calls["keyword_search"] = lambda s: s.keyword_search("a", top_k=3)
            for name, call in calls.items():
                _raises(VectorStoreError, f"{name} on an unbound store", call, store)
        finally:
            store.close()
        calls["ensure_collection"] = lambda s: s.ensure_collection("kit_closed", DIMS, "cosine")
        for name, call in calls.items():
            _raises(VectorStoreError, f"{name} on a closed store", call, store)
