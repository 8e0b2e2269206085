"""The core's keyword index: SQLite FTS5 with BM25 ranking, beside the history.

Used when the vector store does not claim native keyword search. Rows are written inside
the history's commit transaction (an ``on_commit`` hook of the write plan), so the index
and the history always agree; the vector store agrees through the write journal.
Text is tokenised in Python (:mod:`memoweave.memory.tokenize`) and stored as space-joined
tokens, so FTS5's ``unicode61`` tokenizer only splits on the spaces.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memoweave.memory.history import HistoryStore
from memoweave.memory.scope import Scope
from memoweave.memory.tokenize import tokenize

_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS keyword_fts USING fts5(
    memory_id UNINDEXED, user_id UNINDEXED, agent_id UNINDEXED, run_id UNINDEXED,
    status UNINDEXED, tokens, tokenize = 'unicode61 remove_diacritics 0'
);
"""
MAX_QUERY_TOKENS = 64


@dataclass(frozen=True)
class KeywordDoc:
    """One memory as the index sees it."""

    memory_id: str
    text: str
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    status: str


class KeywordIndex:
    """BM25 keyword search over memory texts, scoped like the vector store."""

    def __init__(self, history: HistoryStore) -> None:
        self._history = history
        with history.transaction() as conn:
            conn.execute(_SCHEMA.strip().rstrip(";"))

    @staticmethod
    def upsert(conn: sqlite3.Connection, docs: Iterable[KeywordDoc]) -> None:
        """Inside a transaction: index ``docs``, replacing earlier rows of the same ids."""
        docs = list(docs)
        KeywordIndex.delete(conn, [d.memory_id for d in docs])
        conn.executemany(
            "INSERT INTO keyword_fts(memory_id, user_id, agent_id, run_id, status, tokens) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (d.memory_id, d.user_id, d.agent_id, d.run_id, d.status, " ".join(tokenize(d.text)))
                for d in docs
            ],
        )

    @staticmethod
    def delete(conn: sqlite3.Connection, memory_ids: Sequence[str]) -> None:
        """Inside a transaction: remove ``memory_ids`` from the index."""
        conn.executemany("DELETE FROM keyword_fts WHERE memory_id = ?", [(i,) for i in memory_ids])

    def search(
        self, text: str, scope: Scope, *, top_k: int, statuses: Sequence[str]
    ) -> list[tuple[str, float]]:
        """Memory ids of ``scope`` ranked by BM25 for ``text`` (score > 0, higher is better)."""
        tokens = list(dict.fromkeys(tokenize(text)))[:MAX_QUERY_TOKENS]
        if not tokens or top_k <= 0 or not statuses:
            return []
        match = " OR ".join(f'"{t}"' for t in tokens)
        where = ["keyword_fts MATCH ?"]
        params: list[object] = [match]
        for key, value in scope.as_dict().items():
            where.append(f"{key} = ?")
            params.append(value)
        where.append(f"status IN ({', '.join('?' * len(statuses))})")
        params.extend(statuses)
        params.append(top_k)
        sql = (
            "SELECT memory_id, -bm25(keyword_fts) FROM keyword_fts WHERE "
            + " AND ".join(where)
            + " ORDER BY bm25(keyword_fts) LIMIT ?"
        )
        with self._history.transaction() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [(memory_id, float(score)) for memory_id, score in rows]

    def delete_scope(self, conn: sqlite3.Connection, scope: Scope) -> None:
        """Inside a transaction: remove every row of ``scope``."""
        clauses = " AND ".join(f"{k} = ?" for k in scope.as_dict())
        conn.execute(f"DELETE FROM keyword_fts WHERE {clauses}", list(scope.as_dict().values()))

    def reset(self) -> None:
        """Remove every row."""
        with self._history.transaction() as conn:
            conn.execute("DELETE FROM keyword_fts")
