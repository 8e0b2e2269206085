"""The history database's schema, its version and the migrations between versions.

The version lives in SQLite's ``PRAGMA user_version``. :func:`ensure_schema` (run when a
``HistoryStore`` opens) creates the tables of a new database, migrates an older one inside
one write transaction (so two processes opening at once migrate it once, and a crash
leaves the old version intact), and refuses a database written by a newer memoweave.

Versions:

- 0: wave-1 layout; the ``messages`` table was keyed by a joined scope string
  (``user_id=alice|agent_id=bot#<message id>``), which two different scopes could share.
- 1: ``messages`` keyed by ``(scope, message_id)`` with ``scope`` the unambiguous
  :meth:`memoweave.memory.scope.Scope.key` encoding. Migration rebuilds every row from its
  structured ``user_id`` / ``agent_id`` / ``run_id`` columns; no row is dropped.
- 2: ``journal.owner``, the process that has the write in flight
  (:mod:`memoweave.memory.owners`); rows of older versions have none and count as crashed.
- 3: a ``meta`` key/value table: the collections the database has been used with (for the
  store/history agreement check, :mod:`memoweave.memory.consistency`) and the marker of a
  ``reset`` in progress.
"""

from __future__ import annotations

import sqlite3

from memoweave.errors import HistoryError
from memoweave.memory.scope import scope_key

SCHEMA_VERSION = 3

_HISTORY = """
CREATE TABLE IF NOT EXISTS history (
    id TEXT PRIMARY KEY,
    memory_id TEXT NOT NULL,
    old_memory TEXT,
    new_memory TEXT,
    event TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT,
    is_deleted INTEGER NOT NULL DEFAULT 0,
    actor_id TEXT,
    role TEXT,
    user_id TEXT,
    agent_id TEXT,
    run_id TEXT,
    superseded_by TEXT,
    op_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending'
);
CREATE INDEX IF NOT EXISTS history_memory ON history(memory_id, status, created_at, seq);
CREATE INDEX IF NOT EXISTS history_op ON history(op_id);
CREATE TABLE IF NOT EXISTS journal (
    op_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    undo TEXT NOT NULL,
    owner TEXT
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

_MESSAGES = """
CREATE TABLE messages (
    scope TEXT NOT NULL,
    message_id TEXT NOT NULL,
    user_id TEXT,
    agent_id TEXT,
    run_id TEXT,
    role TEXT NOT NULL,
    name TEXT,
    content TEXT NOT NULL,
    created_at TEXT NOT NULL,
    op_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    PRIMARY KEY (scope, message_id)
);
CREATE INDEX messages_scope ON messages(scope, status, created_at, seq);
CREATE INDEX messages_op ON messages(op_id);
"""

_MESSAGE_COLUMNS = "user_id, agent_id, run_id, role, name, content, created_at, op_id, seq, status"


def schema_version(conn: sqlite3.Connection) -> int:
    """The database's ``user_version``."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def ensure_schema(conn: sqlite3.Connection, path: str) -> bool:
    """Create, migrate or accept the schema of the database behind ``conn`` (autocommit);
    returns whether the database was new (had no history table).

    Raises:
        HistoryError: the database was written by a newer memoweave.
    """
    if schema_version(conn) == SCHEMA_VERSION:
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = schema_version(conn)
        if version > SCHEMA_VERSION:
            raise HistoryError(
                f"the history database {path} has schema version {version}; this memoweave "
                f"reads up to version {SCHEMA_VERSION}",
                hint="Upgrade memoweave (pip install -U memoweave), or point history_db_path "
                "at another file.",
                details={"path": path, "version": version},
            )
        created = not _has_table(conn, "history")
        _run(conn, _HISTORY)
        if version < 1:
            _messages_v1(conn)
        if version < 2 and "owner" not in _columns(conn, "journal"):
            conn.execute("ALTER TABLE journal ADD COLUMN owner TEXT")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
        return created
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _messages_v1(conn: sqlite3.Connection) -> None:
    """Create the v1 ``messages`` table, moving any v0 rows into it."""
    exists = _has_table(conn, "messages")
    if exists:
        conn.execute("ALTER TABLE messages RENAME TO messages_v0")
        conn.execute("DROP INDEX IF EXISTS messages_scope")
        conn.execute("DROP INDEX IF EXISTS messages_op")
    _run(conn, _MESSAGES)
    if not exists:
        return
    rows = conn.execute(f"SELECT id, scope, {_MESSAGE_COLUMNS} FROM messages_v0 ORDER BY rowid")
    moved = [
        (scope_key(user_id, agent_id, run_id), _v0_message_id(old_id, old_scope), user_id,
         agent_id, run_id, *rest)
        for old_id, old_scope, user_id, agent_id, run_id, *rest in rows
    ]  # fmt: skip
    conn.executemany(
        f"INSERT OR IGNORE INTO messages(scope, message_id, {_MESSAGE_COLUMNS}) "
        f"VALUES ({', '.join('?' * 12)})",
        moved,
    )
    conn.execute("DROP TABLE messages_v0")


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    query = "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?"
    return conn.execute(query, (name,)).fetchone() is not None


def _run(conn: sqlite3.Connection, script: str) -> None:
    """Execute ``;``-separated statements inside the current transaction (unlike
    ``executescript``, which commits first)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _v0_message_id(old_id: str, old_scope: str) -> str:
    """The caller's message id inside a v0 row id (``<joined scope>#<message id>``)."""
    prefix = f"{old_scope}#"
    return old_id[len(prefix) :] if old_id.startswith(prefix) else old_id
