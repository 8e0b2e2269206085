"""The SQL translation is exact (no post-filter) for the kit's filters, agrees with the
reference evaluator on hostile values, and uses the indexed columns for scope keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from memoweave_sqlite_vec.filters import translate

from memoweave.filters import evaluate, parse_filter
from memoweave.filters.ast import Comparison
from memoweave.memory.clock import utcnow
from memoweave.memory.read_filter import read_filter
from memoweave.memory.scope import Scope
from memoweave.plugins import load_registry
from memoweave.providers.vector_store import VectorRecord
from memoweave.testing.filter_cases import FILTER_CASES, kit_id, kit_vector


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.name)
def test_kit_filters_translate_exactly(case) -> None:
    node = parse_filter(case.spec) if isinstance(case.spec, dict) else case.spec
    assert translate(node).exact


def test_inexact_values_are_flagged() -> None:
    assert not translate(Comparison("n", "eq", 2**70)).exact
    assert not translate(Comparison("n", "gt", 2.0**60)).exact
    assert not translate(Comparison("s", "eq", "a\x00b")).exact


#: Payload integers are signed 64-bit (the contract); the edges of that range and integers
#: a double cannot hold (2**53 + 1) are stored, and filters compare them with values beyond.
HOSTILE = [
    {"user_id": 7, "n": 2**63 - 1, "s": "a\x00b", "status": True},
    {"user_id": ["alice"], "n": -(2**63), "s": "ab", "expires_ts": "soon"},
    {"user_id": "alice", "n": 1.0, "s": "STRASSE", "expires_ts": 2**63 - 1},
    {"user_id": None, "n": True, "s": "straße", "expires_ts": 5},
    {"n": [1, 2**53 + 1], "s": ["a\x00b"], "expires_ts": 5.5},
]
HOSTILE_FILTERS = [
    {"user_id": 7},
    {"user_id": {"ne": 7}},
    {"user_id": {"in": ["alice", 7]}},
    {"user_id": {"nin": ["alice", 7]}},
    {"user_id": {"contains": "alice"}},
    {"user_id": "*"},
    {"NOT": {"user_id": "*"}},
    {"n": 2**70},
    {"n": {"gt": 2**69}},
    {"n": {"contains": 2**70}},
    {"n": 2**63 - 1},
    {"n": {"gt": 2**62}},
    {"n": {"lt": -(2**62)}},
    {"n": {"contains": 2**53 + 1}},
    {"n": {"contains": 2.0**53}},
    {"n": 1},
    {"n": True},
    {"s": "a\x00b"},
    {"s": {"icontains": "strasse"}},
    {"s": {"contains": "a\x00b"}},
    {"status": True},
    {"expires_ts": {"gt": 5}},
    {"expires_ts": {"lte": 2**64}},
    {"expires_ts": {"gte": 2**63 - 1}},
    {"expires_ts": "soon"},
    {"OR": [{"NOT": {"expires_ts": "*"}}, {"expires_ts": {"gt": 5.1}}]},
]


@pytest.mark.parametrize("raw", HOSTILE_FILTERS, ids=str)
def test_hostile_values_agree_with_the_evaluator(tmp_path: Path, raw: dict) -> None:
    store = load_registry().create("vector_store", "sqlite-vec", {"path": str(tmp_path / "v.db")})
    try:
        store.ensure_collection("hostile", 8, "cosine")
        store.upsert(
            [VectorRecord(kit_id(f"h{i}"), kit_vector(i), p) for i, p in enumerate(HOSTILE)]
        )
        node = parse_filter(raw)
        expected = {kit_id(f"h{i}") for i, p in enumerate(HOSTILE) if evaluate(node, p)}
        assert {r.id for r in store.list(filter=node, limit=100).records} == expected
        assert store.count(filter=node) == len(expected)
        hits = store.search(kit_vector(0), top_k=10, filter=node)
        assert {h.id for h in hits} == expected
    finally:
        store.close()


def test_scope_filters_use_the_indexes(tmp_path: Path) -> None:
    store = load_registry().create("vector_store", "sqlite-vec", {"path": str(tmp_path / "v.db")})
    try:
        store.ensure_collection("plan", 8, "cosine")
        where = translate(read_filter(None, Scope.of(user_id="alice", operation="t"),
                                      include_superseded=False, show_expired=False,
                                      now=utcnow()))  # fmt: skip
        sql = f"EXPLAIN QUERY PLAN SELECT id FROM mw_records WHERE collection = ? AND {where.sql}"
        plan = " ".join(str(row[-1]) for row in store._conn.execute(sql, ["plan", *where.params]))
        assert "USING INDEX mw_records_user_id_status" in plan, plan
    finally:
        store.close()


def test_a_file_without_a_newer_typed_column_is_migrated(tmp_path: Path) -> None:
    config = {"path": str(tmp_path / "v.db")}
    store = load_registry().create("vector_store", "sqlite-vec", config)
    store.ensure_collection("old", 8, "cosine")
    payloads = [{"hash": "h1"}, {"hash": 7}, {}]
    store.upsert([VectorRecord(kit_id(f"m{i}"), kit_vector(i), p) for i, p in enumerate(payloads)])
    store._conn.execute("DROP INDEX mw_records_hash")
    store._conn.execute("ALTER TABLE mw_records DROP COLUMN hash")  # as written before it
    store._conn.execute("UPDATE mw_records SET mw_other = 0")
    store.close()
    reopened = load_registry().create("vector_store", "sqlite-vec", config)
    try:
        reopened.ensure_collection("old", 8, "cosine")
        for raw in ({"hash": "h1"}, {"hash": 7}, {"hash": "*"}, {"hash": {"ne": "h1"}}):
            node = parse_filter(raw)
            expected = {kit_id(f"m{i}") for i, p in enumerate(payloads) if evaluate(node, p)}
            assert {r.id for r in reopened.list(filter=node).records} == expected, raw
    finally:
        reopened.close()
