"""The keyword index's tables, and bringing those of an older memoweave to this layout.

``keyword_fts`` (FTS5) holds each memory's tokens, space-joined; ``keyword_docs`` (one
row per memory: scope ids, status, token count) shares its rowid, so FTS rows are found
through ``keyword_docs``' indexes; ``keyword_lemmas`` remembers each indexed word's
lemma; ``keyword_forms`` keeps the lemma dictionary's forms of each lemma once grouped
(:mod:`.lemma_forms`); ``keyword_vocab`` lists every (token, memory) occurrence.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from memoweave.index.scope_cache import ScopeId

SCHEMA = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS keyword_fts USING fts5("
    "memory_id UNINDEXED, user_id UNINDEXED, agent_id UNINDEXED, run_id UNINDEXED, "
    "status UNINDEXED, tokens, tokenize = 'unicode61 remove_diacritics 0')",
    "CREATE TABLE IF NOT EXISTS keyword_docs (memory_id TEXT PRIMARY KEY, user_id TEXT, "
    "agent_id TEXT, run_id TEXT, status TEXT NOT NULL, length INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS keyword_docs_user ON keyword_docs(user_id, status)",
    "CREATE INDEX IF NOT EXISTS keyword_docs_agent ON keyword_docs(agent_id, status)",
    "CREATE INDEX IF NOT EXISTS keyword_docs_run ON keyword_docs(run_id, status)",
    # every word indexed and its lemma, so a query need not load the lemmatizer
    "CREATE TABLE IF NOT EXISTS keyword_lemmas (lemmatizer TEXT NOT NULL, word TEXT NOT NULL, "
    "lemma TEXT NOT NULL, PRIMARY KEY (lemmatizer, word)) WITHOUT ROWID",
    # the lemma dictionary's forms of each lemma, grouped once per home (index.lemma_forms)
    "CREATE TABLE IF NOT EXISTS keyword_forms (lemmatizer TEXT PRIMARY KEY, "
    "layout INTEGER NOT NULL, starts BLOB NOT NULL, text BLOB NOT NULL)",
    # every (token, memory rowid) occurrence, for BM25 of scopes too large to cache
    "CREATE VIRTUAL TABLE IF NOT EXISTS keyword_vocab USING fts5vocab(keyword_fts, 'instance')",
)
LAYOUT_VERSION = 2
"""1: ``keyword_fts`` rows had rowids of their own; 2: a memory's ``keyword_fts`` rowid is
its ``keyword_docs`` rowid, so FTS rows are found through the indexed ``keyword_docs``
(by id or by scope) instead of by scanning FTS5's unindexed columns."""
FTS_ROWIDS = "SELECT rowid FROM keyword_docs WHERE "
"""The start of a query of ``keyword_fts`` rowids by ``keyword_docs`` conditions."""


def scope_groups(conn: sqlite3.Connection) -> Iterator[tuple[ScopeId, str, int, int]]:
    """(ids, status, documents, total length) of each group of documents with the same."""
    for user_id, agent_id, run_id, status, docs, total in conn.execute(
        "SELECT user_id, agent_id, run_id, status, COUNT(*), SUM(length) FROM keyword_docs "
        "GROUP BY user_id, agent_id, run_id, status"
    ):
        yield (user_id, agent_id, run_id), status, int(docs), int(total)


def link_rowids(conn: sqlite3.Connection) -> bool:
    """Inside the schema transaction: bring the tables to :data:`LAYOUT_VERSION` (one
    pass over an index written by an older memoweave; nothing is dropped); whether rows
    changed."""
    row = conn.execute("SELECT version FROM index_meta WHERE name = 'keyword'").fetchone()
    if row is not None and row[0] >= LAYOUT_VERSION:
        return False
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
    return True
