"""Vector store mixins: writing and reading records (upsert, get, delete, update)."""

from __future__ import annotations

import copy

import pytest

from memoweave.errors import NotFound
from memoweave.filters import parse_filter
from memoweave.providers.vector_store import TEXT_FIELD, VectorRecord, VectorStore
from memoweave.testing.filter_cases import kit_id, kit_vector
from memoweave.testing.helpers import cosine
from memoweave.testing.vs_base import ids_of, list_all, record, records

#: Every payload value type of the contract, with awkward strings.
RICH_PAYLOAD = {
    "user_id": "alice",
    "text": "naïve café — 日本語 한국어 العربية 🎉🧠 \"q\" 'q' back\\slash\nline\ttab",
    "count": 3,
    "zero": 0,
    "ratio": 0.25,
    "negative": -7.5,
    "flag": True,
    "off": False,
    "nothing": None,
    "tags": ["a", "b", "ü", "語"],
    "nums": [1, 2, 3],
    "nested": {"k": {"deep": [1, "x", None]}, "z": 1.5},
    "empty": "",
    "big": 2**63 - 1,
    "past_double": 2**53 + 1,
    "most_negative": -(2**63),
    "tenth": 0.1,
    "epoch": 1764547200.123456,
}
#: A memory text as long as ``add(infer=False)`` stores from one long message (multi-byte
#: characters, so its UTF-8 form is about 2.4 bytes per character: ~48 KB).
LONG_TEXT = "".join(f"line {i}: naïve café 日本語 🎉 — end. " for i in range(700))[:20_000]


def _assert_same_direction(got: list[float] | None, expected: list[float]) -> None:
    assert got is not None, "get(..., with_vectors=True) returned vector=None"
    assert len(got) == len(expected)
    assert cosine(got, expected) == pytest.approx(1.0, abs=1e-4)


class UpsertTests:
    """upsert is idempotent by id and replaces vector and payload."""

    def test_upsert_then_get_round_trips(self, vector_store: VectorStore) -> None:
        """Every payload value type comes back equal; vectors come back when asked.

        Troubleshooting: store payloads as JSON (or an equivalent typed form) and return a
        plain dict; keep ``True`` a bool, ``3`` an int, ``None`` values and nested dicts,
        integers as signed 64-bit (not through a double: ``2**63 - 1`` must survive) and
        floats as doubles (a float32 column turns ``0.1`` and an epoch timestamp into
        other numbers).
        Stores that normalise vectors for cosine may return the normalised vector (the kit
        compares directions). ``get`` without ``with_vectors`` returns ``vector=None``.
        """
        rec = record("rich", RICH_PAYLOAD)
        vector_store.upsert([rec])
        [got] = vector_store.get([rec.id], with_vectors=True)
        assert got.id == rec.id
        changed = sorted(set(got.payload) ^ set(RICH_PAYLOAD))
        changed += [
            k for k in RICH_PAYLOAD if k in got.payload and got.payload[k] != RICH_PAYLOAD[k]
        ]
        assert not changed, f"payload values came back missing, added or changed: {changed}"
        assert got.payload == RICH_PAYLOAD
        for key in ("flag", "off"):
            assert type(got.payload[key]) is bool, f"{key} came back as {got.payload[key]!r}"
        for key in ("count", "zero", "big", "past_double", "most_negative"):
            assert type(got.payload[key]) is int, f"{key} came back as {got.payload[key]!r}"
        _assert_same_direction(got.vector, rec.vector)
        [plain] = vector_store.get([rec.id])
        assert plain.vector is None

    def test_upsert_is_idempotent(self, vector_store: VectorStore) -> None:
        """Upserting the same records twice leaves one copy of each.

        Troubleshooting: use the record id as the engine's primary key and an
        insert-or-replace write; engines without upsert need delete-then-insert by id.
        """
        batch = records("idem", 5, user_id="alice")
        vector_store.upsert(batch)
        vector_store.upsert(batch)
        assert vector_store.count() == 5
        assert sorted(ids_of(list_all(vector_store))) == sorted(r.id for r in batch)

    def test_upsert_replaces_vector_and_payload(self, vector_store: VectorStore) -> None:
        """A second upsert of an id replaces both the vector and the whole payload.

        Troubleshooting: replace, don't merge: keys absent from the new payload must
        disappear, and the vector index must be updated (search with the new vector finds
        the record with score ~1).
        """
        first = record("over", {"user_id": "alice", "old_key": "x"}, kit_vector("v1"))
        second = VectorRecord(first.id, kit_vector("v2"), {"user_id": "bob", "new_key": 2})
        vector_store.upsert([first])
        vector_store.upsert([second])
        [got] = vector_store.get([first.id], with_vectors=True)
        assert got.payload == {"user_id": "bob", "new_key": 2}
        _assert_same_direction(got.vector, second.vector)
        [hit] = vector_store.search(second.vector, top_k=1)
        assert hit.id == first.id
        assert hit.score == pytest.approx(1.0, abs=1e-3)
        assert vector_store.count() == 1

    def test_upsert_empty_list_is_noop(self, vector_store: VectorStore) -> None:
        """upsert([]) does nothing and raises nothing.

        Troubleshooting: return early on an empty batch; many engine clients reject an
        empty insert.
        """
        vector_store.upsert([])
        assert vector_store.count() == 0

    def test_inputs_are_not_mutated(self, vector_store: VectorStore) -> None:
        """The caller's records, vectors and payload dicts are unchanged after upsert/update.

        Troubleshooting: copy before normalising vectors or adding engine fields (ids,
        ``_score``, text columns) to a payload; never ``pop`` from the caller's dict.
        """
        batch = [record(f"mut-{i}", copy.deepcopy(RICH_PAYLOAD)) for i in range(3)]
        before = copy.deepcopy(batch)
        vector_store.upsert(batch)
        assert batch == before, "upsert mutated the caller's records"
        new_vector, new_payload = kit_vector("mut-new"), {"user_id": "bob", "tags": ["x"]}
        vector_before, payload_before = list(new_vector), copy.deepcopy(new_payload)
        vector_store.update(batch[0].id, vector=new_vector, payload=new_payload)
        assert new_vector == vector_before, "update mutated the caller's vector"
        assert new_payload == payload_before, "update mutated the caller's payload"

    def test_returned_payloads_do_not_alias_stored_state(self, vector_store: VectorStore) -> None:
        """Mutating a payload returned by get/search/list does not change the store.

        Troubleshooting: in-process stores must return deep copies of stored payloads (and
        store copies of the inputs); a shallow ``dict(payload)`` still shares nested lists.
        """
        rec = record("alias", {"user_id": "alice", "tags": ["a"], "nested": {"k": [1]}})
        vector_store.upsert([rec])
        for returned in (
            vector_store.get([rec.id])[0].payload,
            vector_store.search(rec.vector, top_k=1)[0].payload,
            list_all(vector_store)[0].payload,
        ):
            returned["user_id"] = "mallory"
            returned["tags"].append("mutated")
            returned["nested"]["k"].append(2)
        assert vector_store.get([rec.id])[0].payload == rec.payload

    def test_batch_upsert_of_1000_records(self, vector_store: VectorStore) -> None:
        """One upsert of 1,000 records stores all of them; filtered count is exact.

        Troubleshooting: split large batches into engine-sized chunks inside ``upsert``;
        flush before ``count`` if the engine indexes asynchronously (e.g. wait for the write
        to be acknowledged/consistent).
        """
        batch = [
            record(f"bulk-{i}", {"user_id": "even" if i % 2 == 0 else "odd", "i": i})
            for i in range(1000)
        ]
        vector_store.upsert(batch)
        assert vector_store.count() == 1000
        from memoweave.filters import parse_filter

        assert vector_store.count(filter=parse_filter({"user_id": "odd"})) == 500
        sample = [batch[i].id for i in (999, 0, 500)]
        assert ids_of(vector_store.get(sample)) == sample

    def test_unicode_payload_round_trip(self, vector_store: VectorStore) -> None:
        """CJK, emoji, RTL, combining marks, quotes and backslashes survive a round trip.

        Troubleshooting: store text as UTF-8 without escaping it yourself; when building
        engine query strings, use parameter binding instead of string concatenation.
        """
        texts = [
            "漢字かな交じり文",
            "🧠🎉👩‍👩‍👧",
            "مرحبا",
            "e\u0301te\u0301",
            "'\"\\%_*?",
            "a\nb\tc",
        ]
        batch = [record(f"uni-{i}", {"user_id": t, "text": t}) for i, t in enumerate(texts)]
        vector_store.upsert(batch)
        got = vector_store.get([r.id for r in batch])
        assert [g.payload for g in got] == [r.payload for r in batch]

    def test_long_memory_text_round_trips(self, vector_store: VectorStore) -> None:
        """A 20,000-character memory text (~48 KB of UTF-8) comes back whole from get,
        search and list, and keyword search (when claimed) finds it by its last word.

        Troubleshooting: a text column of a fixed width (VARCHAR(512), an engine's default
        string length) silently cuts memories that ``add(infer=False)`` stores from one
        long message; keep the whole text in the payload (the source of truth returned by
        ``get``) and size any indexed copy to hold it, or refuse the record with a typed
        error: never truncate what the caller was told is stored.
        """
        rec = record("long", {"user_id": "alice", TEXT_FIELD: LONG_TEXT + " zeppelin"})
        vector_store.upsert([rec])
        [got] = vector_store.get([rec.id])
        assert got.payload == rec.payload, "get returned a different (cut?) text"
        [hit] = vector_store.search(rec.vector, top_k=1)
        assert hit.payload == rec.payload, "search returned a different (cut?) text"
        assert [r.payload for r in list_all(vector_store)] == [rec.payload]
        if vector_store.capabilities.keyword_search:
            found = vector_store.keyword_search("zeppelin", top_k=1)
            assert ids_of(found) == [rec.id], "keyword search missed the text's last word"


class GetDeleteTests:
    """get keeps order and skips missing ids; delete ignores missing ids."""

    def test_get_skips_missing_and_keeps_order(self, vector_store: VectorStore) -> None:
        """get([c, missing, a]) returns [c, a].

        Troubleshooting: engines return rows in their own order; re-order by the ``ids``
        argument and drop ids the engine did not return instead of raising.
        """
        a, b, c = records("get", 3)
        vector_store.upsert([a, b, c])
        missing = kit_id("never-written")
        assert ids_of(vector_store.get([c.id, missing, a.id])) == [c.id, a.id]
        assert vector_store.get([missing]) == []
        assert vector_store.get([]) == []

    def test_delete_removes_records_everywhere(self, vector_store: VectorStore) -> None:
        """A deleted record disappears from get, list, count and search.

        Troubleshooting: delete from every index the store keeps (vector index, payload
        table, keyword index) and make the deletion visible before returning.
        """
        batch = records("del", 4, user_id="alice")
        vector_store.upsert(batch)
        vector_store.delete([batch[1].id, batch[2].id])
        assert vector_store.count() == 2
        assert vector_store.get([batch[1].id]) == []
        assert sorted(ids_of(list_all(vector_store))) == sorted([batch[0].id, batch[3].id])
        hit_ids = ids_of(vector_store.search(batch[1].vector, top_k=10))
        assert batch[1].id not in hit_ids and batch[2].id not in hit_ids

    def test_delete_missing_id_is_noop(self, vector_store: VectorStore) -> None:
        """Deleting unknown ids (or none) raises nothing and deletes nothing.

        Troubleshooting: ignore "not found" responses from the engine; return early on an
        empty id list.
        """
        vector_store.upsert(records("keep", 2))
        vector_store.delete([kit_id("missing-1"), kit_id("missing-2")])
        vector_store.delete([])
        assert vector_store.count() == 2

    def test_expect_writes_hints_change_no_result(self, vector_store: VectorStore) -> None:
        """``expect_writes`` (what each id holds now, ``None`` for a fresh id) before a
        write changes nothing it does: a record moved to another user_id is found once,
        under it; a stale hint (a payload the id no longer holds) still replaces and
        deletes the right record; a fresh id is stored.

        Troubleshooting: a store that uses the hint must check a payload hint against
        where the record really is (and look everywhere when it is not there), and use a
        hint only for the write it was given for.
        """
        count = vector_store.count
        alice = parse_filter({"user_id": "alice"})
        a, b = record("ew-a", {"user_id": "alice"}), record("ew-b", {"user_id": "alice"})
        vector_store.upsert([a, b])
        fresh = record("ew-new", {"user_id": "carol"})
        vector_store.expect_writes({a.id: a.payload, fresh.id: None})
        vector_store.upsert([record("ew-a", {"user_id": "bob"}), fresh])
        assert sorted(ids_of(list_all(vector_store))) == sorted([a.id, b.id, fresh.id])
        assert ids_of(list_all(vector_store, filter=alice)) == [b.id]
        assert count(filter=parse_filter({"user_id": "bob"})) == 1
        vector_store.expect_writes({b.id: {"user_id": "dave"}})  # stale: b is alice's
        vector_store.upsert([record("ew-b", {"user_id": "erin"})])
        assert count(filter=alice) == 0 and count() == 3
        assert [r.payload["user_id"] for r in vector_store.get([b.id])] == ["erin"]
        vector_store.expect_writes({a.id: {"user_id": "zed"}})  # stale: a is bob's
        vector_store.delete([a.id])
        assert vector_store.get([a.id]) == [] and count() == 2
        vector_store.upsert([record("ew-a", {"user_id": "alice"})])  # the hint was used
        assert ids_of(list_all(vector_store, filter=alice)) == [a.id] and count() == 3


class UpdateTests:
    """update replaces the vector and/or the whole payload of an existing record."""

    def test_update_vector_only_keeps_payload(self, vector_store: VectorStore) -> None:
        """update(id, vector=v) changes the vector and keeps the payload.

        Troubleshooting: fetch the stored payload and write it back with the new vector
        if the engine can only replace whole rows.
        """
        rec = record("upd-v", {"user_id": "alice", "k": [1, 2]})
        vector_store.upsert([rec, record("other")])
        new_vector = kit_vector("upd-v-new")
        vector_store.update(rec.id, vector=new_vector)
        [got] = vector_store.get([rec.id], with_vectors=True)
        assert got.payload == rec.payload
        _assert_same_direction(got.vector, new_vector)
        assert vector_store.search(new_vector, top_k=1)[0].id == rec.id

    def test_update_payload_only_replaces_whole_payload(self, vector_store: VectorStore) -> None:
        """update(id, payload=p) replaces the payload entirely and keeps the vector.

        Troubleshooting: this is a replace, not a merge: old keys must vanish. Keep the
        stored vector (searching with it still scores ~1).
        """
        rec = record("upd-p", {"user_id": "alice", "old": True})
        vector_store.upsert([rec])
        vector_store.update(rec.id, payload={"user_id": "alice", "new": "yes"})
        [got] = vector_store.get([rec.id], with_vectors=True)
        assert got.payload == {"user_id": "alice", "new": "yes"}, "payload merged, not replaced"
        _assert_same_direction(got.vector, rec.vector)
        [hit] = vector_store.search(rec.vector, top_k=1)
        assert hit.score == pytest.approx(1.0, abs=1e-3)

    def test_update_missing_id_raises_not_found(self, vector_store: VectorStore) -> None:
        """update of an unknown id raises memoweave.errors.NotFound and creates nothing.

        Troubleshooting: check existence first (engines usually upsert silently) and raise
        ``NotFound``, not ``VectorStoreError`` or ``KeyError``.
        """
        with pytest.raises(NotFound):
            vector_store.update(kit_id("ghost"), payload={"user_id": "x"})
        with pytest.raises(NotFound):
            vector_store.update(kit_id("ghost"), vector=kit_vector("ghost"))
        assert vector_store.count() == 0
