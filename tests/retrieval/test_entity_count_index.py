"""An older home, which has the narrower ``(user_id, status)`` index on its entity links
instead of the covering ``entity_links_user_memory``, gets it on open with its links
unchanged (a scope's count of memories with entities is now read from ``scope_docs``:
test_scope_stats)."""

from __future__ import annotations

import random
from pathlib import Path

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
