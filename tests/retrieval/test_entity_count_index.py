"""A user scope's count of memories with entities (the IDF base of a first search) is
read from the covering ``entity_links_user_memory`` index alone, and an older home, which
has the narrower ``(user_id, status)`` index instead, gets it on open with its links
unchanged."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memoweave.index import keyword_postings
from memoweave.index.entity_index import EntityIndex
from memoweave.memory.history import HistoryStore
from memoweave.memory.scope import Scope

from .test_incremental_index import random_docs

ALICE = Scope.of(user_id="alice", operation="test")


def _filled(path: Path) -> HistoryStore:
    history = HistoryStore(path)
    entities = EntityIndex(history)
    rng = random.Random(7)
    with history.transaction() as conn:
        entities.upsert(conn, random_docs(rng, 120))
    return history


def _indexes(history: HistoryStore) -> set[str]:
    rows = history.connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entity_links'"
    )
    return {name for (name,) in rows}


def test_a_scope_count_reads_the_covering_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword_postings, "SCANNED_MAX_DOCS", 0)  # build the scope's entry
    monkeypatch.setattr(keyword_postings, "SCANNED_MAX_LINKS", 0)
    history = _filled(tmp_path / "h.db")
    statements: list[str] = []
    history.connection.set_trace_callback(statements.append)
    EntityIndex(history).match(["caroline", "lisbon"], ALICE, ["m0", "m1"], ["active"])
    history.connection.set_trace_callback(None)
    counts = [s for s in statements if "COUNT(DISTINCT memory_id)" in s]
    assert counts
    for sql in counts:
        plan = [d for *_, d in history.connection.execute("EXPLAIN QUERY PLAN " + sql)]
        assert any("COVERING INDEX entity_links_user_memory" in d for d in plan), plan
    history.close()


def test_an_older_home_gets_the_index_and_keeps_its_links(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    history = _filled(path)
    before = EntityIndex(history).match(["caroline", "lisbon"], ALICE, ["m0", "m1"], ["active"])
    assert before.weight and before.links  # the scope has entities to match
    links = history.connection.execute("SELECT * FROM entity_links ORDER BY 1, 2").fetchall()
    with history.transaction() as conn:  # the schema of a home written before this index
        conn.execute("DROP INDEX entity_links_user_memory")
        conn.execute("CREATE INDEX entity_links_user ON entity_links(user_id, status)")
    history.close()
    history = HistoryStore(path)
    reopened = EntityIndex(history)
    assert "entity_links_user_memory" in _indexes(history)
    assert "entity_links_user" not in _indexes(history)
    assert (
        history.connection.execute("SELECT * FROM entity_links ORDER BY 1, 2").fetchall() == links
    )
    assert reopened.match(["caroline", "lisbon"], ALICE, ["m0", "m1"], ["active"]) == before
    history.close()
