"""The core's keyword index: BM25 over memory texts, in SQLite beside the history.

Two tables: ``keyword_fts`` (FTS5) finds the memories that contain a query token;
``keyword_docs`` (one row per memory: scope ids, status, token count) gives each scope's
document count and average length. Scores are Okapi BM25 (k1 = 1.2, b = 0.75) computed
with the statistics of the searched scope only, so one user's memories never change the
ranking of another's (FTS5's own ``bm25()`` would use the whole table). A searched
scope's postings are kept in memory (:mod:`memoweave.index.keyword_postings`) until the
next write (of this process, or of another connection to the file); scopes too large for
that are scored from their FTS5 matches.

Rows are written inside the history's commit transaction (an ``on_commit`` hook of the
write plan), so the index and the history always agree; the vector store agrees through
the write journal. Text is tokenised in Python (:mod:`memoweave.index.tokenize`) and
stored as space-joined tokens, so FTS5's ``unicode61`` tokenizer only splits on spaces.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memoweave.index.contracts import Database, ScopeKeys
from memoweave.index.keyword_postings import (
    K1,
    B,
    PostingsCache,
    bm25_ceiling,
    bm25_idf,
    data_version,
)
from memoweave.index.tokenize import tokenize

_SCHEMA = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS keyword_fts USING fts5("
    "memory_id UNINDEXED, user_id UNINDEXED, agent_id UNINDEXED, run_id UNINDEXED, "
    "status UNINDEXED, tokens, tokenize = 'unicode61 remove_diacritics 0')",
    "CREATE TABLE IF NOT EXISTS keyword_docs (memory_id TEXT PRIMARY KEY, user_id TEXT, "
    "agent_id TEXT, run_id TEXT, status TEXT NOT NULL, length INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS keyword_docs_user ON keyword_docs(user_id, status)",
    "CREATE INDEX IF NOT EXISTS keyword_docs_agent ON keyword_docs(agent_id, status)",
    "CREATE INDEX IF NOT EXISTS keyword_docs_run ON keyword_docs(run_id, status)",
    "CREATE TABLE IF NOT EXISTS index_meta (name TEXT PRIMARY KEY, version INTEGER NOT NULL)",
    # every (token, memory rowid) occurrence, for BM25 of scopes too large to cache
    "CREATE VIRTUAL TABLE IF NOT EXISTS keyword_vocab USING fts5vocab(keyword_fts, 'instance')",
)
LAYOUT_VERSION = 2
"""1: ``keyword_fts`` rows had rowids of their own; 2: a memory's ``keyword_fts`` rowid is
its ``keyword_docs`` rowid, so FTS rows are found through the indexed ``keyword_docs``
(by id or by scope) instead of by scanning FTS5's unindexed columns."""
_FTS_ROWIDS = "SELECT rowid FROM keyword_docs WHERE "
MAX_QUERY_TOKENS = 64


@dataclass(frozen=True)
class KeywordScores:
    """BM25 of every memory of a scope that shares a token with a query.

    ``scores`` maps memory ids to their BM25 score (> 0); ``ceiling`` is the score a memory
    matching every query token at saturation would get (:func:`.keyword_postings.bm25_ceiling`),
    so ``score / ceiling`` is in [0, 1] and comparable across queries and pools.
    """

    scores: dict[str, float]
    ceiling: float

    def top(self, k: int) -> list[tuple[str, float]]:
        """The ``k`` best (id, score), best first (ties by id)."""
        return heapq.nsmallest(k, self.scores.items(), key=lambda pair: (-pair[1], pair[0]))


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

    def __init__(self, history: Database) -> None:
        self._history = history
        self._generation = 0
        self._stats: dict[tuple[object, ...], tuple[tuple[int, int], int, float]] = {}
        self._postings = PostingsCache(self._scope_stats)
        with history.transaction() as conn:
            for statement in _SCHEMA:
                conn.execute(statement)
            _link_rowids(conn)

    def upsert(self, conn: sqlite3.Connection, docs: Iterable[KeywordDoc]) -> None:
        """Inside a transaction: index ``docs``, replacing earlier rows of the same ids."""
        docs = list(docs)
        self.delete(conn, [d.memory_id for d in docs])
        rows = [(d, tokenize(d.text)) for d in docs]
        conn.executemany(
            "INSERT INTO keyword_docs(memory_id, user_id, agent_id, run_id, status, length) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(d.memory_id, d.user_id, d.agent_id, d.run_id, d.status, len(t)) for d, t in rows],
        )
        conn.executemany(
            "INSERT INTO keyword_fts(rowid, memory_id, user_id, agent_id, run_id, status, tokens) "
            f"VALUES (({_FTS_ROWIDS}memory_id = ?), ?, ?, ?, ?, ?, ?)",
            [
                (d.memory_id, d.memory_id, d.user_id, d.agent_id, d.run_id, d.status, " ".join(t))
                for d, t in rows
            ],
        )

    def delete(self, conn: sqlite3.Connection, memory_ids: Sequence[str]) -> None:
        """Inside a transaction: remove ``memory_ids`` from the index."""
        self._generation += 1
        ids = [(i,) for i in memory_ids]
        conn.executemany(
            f"DELETE FROM keyword_fts WHERE rowid IN ({_FTS_ROWIDS}memory_id = ?)", ids
        )
        conn.executemany("DELETE FROM keyword_docs WHERE memory_id = ?", ids)

    def delete_scope(self, conn: sqlite3.Connection, scope: ScopeKeys) -> None:
        """Inside a transaction: remove every row of ``scope``."""
        self._generation += 1
        clauses = " AND ".join(f"{k} = ?" for k in scope.as_dict())
        params = list(scope.as_dict().values())
        conn.execute(f"DELETE FROM keyword_fts WHERE rowid IN ({_FTS_ROWIDS}{clauses})", params)
        conn.execute(f"DELETE FROM keyword_docs WHERE {clauses}", params)

    def indexed_ids(self) -> set[str]:
        """Every memory id the index holds (for ``memoweave doctor``)."""
        with self._history.snapshot() as conn:
            return {row[0] for row in conn.execute("SELECT memory_id FROM keyword_docs")}

    def reset(self) -> None:
        """Remove every row."""
        self._generation += 1
        with self._history.transaction() as conn:
            conn.execute("DELETE FROM keyword_fts")
            conn.execute("DELETE FROM keyword_docs")

    def search(
        self, text: str, scope: ScopeKeys, *, top_k: int, statuses: Sequence[str]
    ) -> list[tuple[str, float]]:
        """Memory ids of ``scope`` ranked by BM25 for ``text`` (score > 0, higher is better)."""
        if top_k <= 0:
            return []
        return self.scores(text, scope, statuses=statuses).top(top_k)

    def scores(self, text: str, scope: ScopeKeys, *, statuses: Sequence[str]) -> KeywordScores:
        """BM25 of every memory of ``scope`` with one of ``text``'s tokens, and the query's
        ceiling (see :class:`KeywordScores`)."""
        tokens = list(dict.fromkeys(tokenize(text)))[:MAX_QUERY_TOKENS]
        if not tokens or not statuses:
            return KeywordScores({}, 0.0)
        keys = scope.as_dict()
        where = " AND ".join(
            [*(f"{k} = ?" for k in keys), f"status IN ({', '.join('?' * len(statuses))})"]
        )
        params: list[object] = [*keys.values(), *statuses]
        with self._history.snapshot() as conn:
            postings = self._postings.get(conn, where, params, self._generation)
            if postings is not None:
                scored = postings.score(tokens)
                ceiling = bm25_ceiling(postings.docs, postings.matching(tokens))
            else:
                scored, ceiling = self._score_matches(conn, tokens, where, params)
        return KeywordScores({i: s for i, s in scored if s > 0}, ceiling)

    def _score_matches(
        self, conn: sqlite3.Connection, tokens: list[str], where: str, params: list[object]
    ) -> tuple[list[tuple[str, float]], float]:
        """BM25 of the scope's memories holding one of ``tokens`` and the query's ceiling
        (the path of scopes too large to cache), computed inside SQLite: FTS5's token
        instances (``keyword_vocab``) joined to the scope's ``keyword_docs`` rows, so the
        work is that of the matches, in C, and Python only receives (memory id, score)
        pairs."""
        marks = ", ".join("?" * len(tokens))
        matches = (  # (memory id, token, term frequency, length) of each matching memory
            "SELECT d.memory_id AS memory_id, v.term AS term, COUNT(*) AS tf, "
            "d.length AS length FROM keyword_vocab AS v JOIN keyword_docs AS d "
            f"ON d.rowid = v.doc WHERE v.term IN ({marks}) AND {where} GROUP BY v.doc, v.term"
        )
        found = [*tokens, *params]
        df = conn.execute(f"SELECT term, COUNT(*) FROM ({matches}) GROUP BY term", found)
        docs, avg_length = self._scope_stats(conn, where, params)
        matching = dict(df.fetchall())
        ceiling = bm25_ceiling(docs, [matching.get(t, 0) for t in tokens])
        idf = {term: bm25_idf(docs, n) for term, n in matching.items()}
        if not idf:
            return [], ceiling
        weight = "CASE term " + " ".join("WHEN ? THEN ?" for _ in idf) + " END"
        tf = f"tf * {K1 + 1} / (tf + {K1} * ({1 - B} + {B} * length / ?))"  # bm25_tf
        rows = conn.execute(
            f"SELECT memory_id, SUM(({weight}) * {tf}) FROM ({matches}) GROUP BY memory_id",
            [*(x for pair in idf.items() for x in pair), avg_length, *found],
        ).fetchall()
        return [(memory_id, float(score)) for memory_id, score in rows], ceiling

    def _scope_stats(
        self, conn: sqlite3.Connection, where: str, params: list[object]
    ) -> tuple[int, float]:
        """(documents, average length) of the scope, cached until the next write."""
        key = (where, *params)
        cached = self._stats.get(key)
        version = (self._generation, data_version(conn))
        if cached is not None and cached[0] == version:
            return cached[1], cached[2]
        count, total = conn.execute(
            f"SELECT COUNT(*), COALESCE(SUM(length), 0) FROM keyword_docs WHERE {where}", params
        ).fetchone()
        average = max(1.0, total / count) if count else 1.0
        if len(self._stats) > 1024:
            self._stats.clear()
        self._stats[key] = (version, int(count), average)
        return int(count), average


def _link_rowids(conn: sqlite3.Connection) -> None:
    """Inside the schema transaction: bring the tables to :data:`LAYOUT_VERSION` (one
    pass over an index written by an older memoweave; nothing is dropped)."""
    row = conn.execute("SELECT version FROM index_meta WHERE name = 'keyword'").fetchone()
    if row is not None and row[0] >= LAYOUT_VERSION:
        return
    if conn.execute("SELECT 1 FROM keyword_fts LIMIT 1").fetchone() is not None:
        columns = "memory_id, user_id, agent_id, run_id, status, tokens"
        conn.execute(f"CREATE TEMP TABLE keyword_fts_v1 AS SELECT {columns} FROM keyword_fts")
        conn.execute("DELETE FROM keyword_fts")
        conn.execute(
            f"INSERT INTO keyword_fts(rowid, {columns}) SELECT d.rowid, o.memory_id, o.user_id, "
            "o.agent_id, o.run_id, o.status, o.tokens FROM keyword_fts_v1 AS o "
            "JOIN keyword_docs AS d ON d.memory_id = o.memory_id"
        )
        conn.execute("DROP TABLE keyword_fts_v1")
    conn.execute(
        "INSERT OR REPLACE INTO index_meta(name, version) VALUES ('keyword', ?)", (LAYOUT_VERSION,)
    )
