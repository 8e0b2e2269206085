"""The keyword index finds its FTS rows through ``keyword_docs`` (rowid-linked), and an
index written with the older layout (FTS rowids of their own) is relinked on open."""

from __future__ import annotations

from pathlib import Path

from memoweave.index.keyword_index import KeywordDoc, KeywordIndex
from memoweave.index.keyword_tables import LAYOUT_VERSION
from memoweave.memory.history import HistoryStore
from memoweave.memory.scope import Scope

DOCS = [KeywordDoc(f"m{i}", f"Caroline paints boat number {i}", "alice", None, None, "active")
        for i in range(6)]  # fmt: skip
ALICE = Scope.of(user_id="alice", operation="test")


def linked(history: HistoryStore) -> int:
    return history.connection.execute(
        "SELECT COUNT(*) FROM keyword_fts AS f JOIN keyword_docs AS d "
        "ON f.rowid = d.rowid AND f.memory_id = d.memory_id"
    ).fetchone()[0]


def test_rows_are_linked_and_deleted_through_keyword_docs(tmp_path: Path) -> None:
    history = HistoryStore(tmp_path / "h.db")
    index = KeywordIndex(history)
    with history.transaction() as conn:
        index.upsert(conn, DOCS)
    with history.transaction() as conn:
        index.upsert(conn, DOCS[:2])  # re-index: replaces, never duplicates
        index.delete(conn, ["m5"])
    assert linked(history) == 5
    assert {i for i, _ in index.search("boat", ALICE, top_k=10, statuses=["active"])} == {
        f"m{i}" for i in range(5)
    }
    with history.transaction() as conn:
        index.delete_scope(conn, ALICE)
    assert history.connection.execute("SELECT COUNT(*) FROM keyword_fts").fetchone()[0] == 0
    history.close()


def test_an_index_of_the_older_layout_is_relinked(tmp_path: Path) -> None:
    history = HistoryStore(tmp_path / "h.db")
    KeywordIndex(history)
    conn = history.connection
    conn.execute("DELETE FROM index_meta")  # as an older memoweave left it
    for n, doc in enumerate(reversed(DOCS)):  # FTS rowids unrelated to keyword_docs'
        conn.execute(
            "INSERT INTO keyword_fts(rowid, memory_id, user_id, agent_id, run_id, status, tokens)"
            " VALUES (?, ?, ?, NULL, NULL, 'active', ?)",
            (1000 + n, doc.memory_id, doc.user_id, f"caroline paint boat number {doc.memory_id}"),
        )
        conn.execute(
            "INSERT INTO keyword_docs(memory_id, user_id, status, length) VALUES (?, ?, ?, 5)",
            (doc.memory_id, doc.user_id, "active"),
        )
    assert linked(history) == 0
    index = KeywordIndex(history)  # reopen: one relinking pass
    assert linked(history) == len(DOCS)
    version = conn.execute("SELECT version FROM index_meta WHERE name = 'keyword'").fetchone()
    assert version[0] == LAYOUT_VERSION
    assert len(index.search("boat", ALICE, top_k=10, statuses=["active"])) == len(DOCS)
    history.close()
