"""SQLite history: memory events, the per-scope message window and the write journal.

One database file (WAL mode) holds three tables:

- ``history``: one row per event (ADD, UPDATE, SUPERSEDE, DELETE) with the old and new
  text, actor, role and timestamps. Rows are written ``pending`` by :meth:`begin` and become
  visible only when :meth:`commit` flips them to ``committed``.
- ``messages``: the conversation messages handed to ``add``, keyed by (scope key,
  message id), for the message window that extraction prompts show. The scope key is
  :meth:`memoweave.memory.scope.Scope.key`, so scopes never share rows.
- ``journal``: one row per write in flight, holding the before-images needed to undo the
  vector-store side, and its owner (:mod:`memoweave.memory.owners`). A row left behind by
  a crash is rolled back by the recovery in :mod:`memoweave.memory.transaction`; a row
  whose owner is a live process sharing the home is left alone.

The class does no vector-store I/O; it only knows SQLite. The schema and its migrations
are in :mod:`memoweave.memory.history_schema`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoweave.errors import HistoryError
from memoweave.memory.history_schema import ensure_schema
from memoweave.memory.owners import OwnerLock

_HISTORY_COLUMNS = (
    "id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at",
    "is_deleted", "actor_id", "role", "user_id", "agent_id", "run_id", "superseded_by",
)  # fmt: skip


@dataclass(frozen=True)
class HistoryEvent:
    """One history row to write."""

    id: str
    memory_id: str
    event: str
    created_at: str
    old_memory: str | None = None
    new_memory: str | None = None
    updated_at: str | None = None
    is_deleted: bool = False
    actor_id: str | None = None
    role: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    superseded_by: str | None = None


@dataclass(frozen=True)
class StoredMessage:
    """One conversation message kept for the message window: the caller's message ``id``
    within the scope whose :meth:`~memoweave.memory.scope.Scope.key` is ``scope``."""

    id: str
    scope: str
    role: str
    content: str
    created_at: str
    name: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None


class HistoryStore:
    """The SQLite side of memoweave: history, message window and write journal.

    Thread-safe (one connection guarded by a lock). ``path`` may be ``":memory:"``.
    ``created`` says whether this open created the database (a missing or empty file).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        self._conn, self.created = _open(self.path)  # sqlite errors: typed by _open
        try:
            self._owner = OwnerLock(self.path)
        except BaseException as exc:
            self._conn.close()
            if isinstance(exc, OSError):
                raise HistoryError(f"cannot open history database {self.path}: {exc}") from exc
            raise
        self._closed = False

    @property
    def connection(self) -> sqlite3.Connection:
        """The underlying connection, for modules that keep tables beside the history."""
        return self._conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run a block in one write transaction (SQLite's write lock taken at once);
        errors become ``HistoryError``."""
        with self._begin("BEGIN IMMEDIATE") as conn:
            yield conn

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """Run read-only queries on one consistent snapshot; in WAL mode this never blocks
        writers in other processes (unlike :meth:`transaction`)."""
        with self._begin("BEGIN DEFERRED") as conn:
            yield conn

    @contextmanager
    def _begin(self, statement: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._closed:
                raise HistoryError("the history database is closed", hint="Create a new Memory.")
            try:
                self._conn.execute(statement)
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException as exc:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise HistoryError(f"history database error: {exc}") from exc
                raise

    # -- the write protocol ---------------------------------------------------------------

    def begin(
        self,
        conn: sqlite3.Connection,
        op_id: str,
        created_at: str,
        undo: Sequence[dict[str, Any]],
        events: Sequence[HistoryEvent],
        messages: Sequence[StoredMessage] = (),
    ) -> None:
        """Inside a transaction: journal ``undo`` and write ``events``/``messages`` pending."""
        conn.execute(
            "INSERT INTO journal(op_id, created_at, undo, owner) VALUES (?, ?, ?, ?)",
            (op_id, created_at, json.dumps(list(undo)), self._owner.owner),
        )
        conn.executemany(
            f"INSERT INTO history({', '.join(_HISTORY_COLUMNS)}, op_id, seq, status) "
            f"VALUES ({', '.join('?' * len(_HISTORY_COLUMNS))}, ?, ?, 'pending')",
            [
                (*(_event_value(e, c) for c in _HISTORY_COLUMNS), op_id, seq)
                for seq, e in enumerate(events)
            ],
        )
        conn.executemany(
            "INSERT OR IGNORE INTO messages(message_id, scope, user_id, agent_id, run_id, role, "
            "name, content, created_at, op_id, seq, status) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending')",
            [
                (
                    m.id,
                    m.scope,
                    m.user_id,
                    m.agent_id,
                    m.run_id,
                    m.role,
                    m.name,
                    m.content,
                    m.created_at,
                    op_id,
                    seq,
                )
                for seq, m in enumerate(messages)
            ],
        )

    def commit(self, conn: sqlite3.Connection, op_id: str) -> None:
        """Inside a transaction: make ``op_id``'s rows visible and drop its journal entry."""
        conn.execute("UPDATE history SET status='committed' WHERE op_id=?", (op_id,))
        conn.execute("UPDATE messages SET status='committed' WHERE op_id=?", (op_id,))
        conn.execute("DELETE FROM journal WHERE op_id=?", (op_id,))

    def discard(self, conn: sqlite3.Connection, op_id: str) -> None:
        """Inside a transaction: remove every trace of the uncommitted ``op_id``."""
        conn.execute("DELETE FROM history WHERE op_id=? AND status='pending'", (op_id,))
        conn.execute("DELETE FROM messages WHERE op_id=? AND status='pending'", (op_id,))
        conn.execute("DELETE FROM journal WHERE op_id=?", (op_id,))

    def pending_journal(self) -> list[tuple[str, list[dict[str, Any]]]]:
        """Writes that began but never committed or discarded, left by a crash or by a
        failed rollback of this history; never those another live process has in flight
        (see :mod:`memoweave.memory.owners`)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT op_id, undo, owner FROM journal ORDER BY created_at"
            ).fetchall()
        mine = self._owner.owner
        return [
            (op_id, json.loads(undo))
            for op_id, undo, owner in rows
            if owner == mine or not self._owner.alive(owner)
        ]

    # -- reads ------------------------------------------------------------------------------

    def events(self, memory_id: str) -> list[dict[str, Any]]:
        """Committed events of one memory, oldest first, as mem0-shaped dicts."""
        with self._lock:
            cur = self._conn.execute(
                f"SELECT {', '.join(_HISTORY_COLUMNS)} FROM history "
                "WHERE memory_id=? AND status='committed' ORDER BY created_at, rowid",
                (memory_id,),
            )
            rows = cur.fetchall()
        return [
            {**dict(zip(_HISTORY_COLUMNS, row, strict=True)), "is_deleted": bool(row[7])}
            for row in rows
        ]

    def existing_event_ids(self, event_ids: Sequence[str]) -> set[str]:
        """Which of ``event_ids`` are already rows of the history (any status)."""
        found: set[str] = set()
        ids = list(dict.fromkeys(event_ids))
        with self._lock:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                rows = self._conn.execute(
                    f"SELECT id FROM history WHERE id IN ({', '.join('?' * len(chunk))})", chunk
                ).fetchall()
                found.update(row[0] for row in rows)
        return found

    def recent_messages(self, scope: str, limit: int) -> list[StoredMessage]:
        """The last ``limit`` committed messages of ``scope``, oldest first."""
        if limit <= 0:
            return []
        with self._lock:
            rows = self._conn.execute(
                "SELECT message_id, scope, role, content, created_at, name FROM messages "
                "WHERE scope=? AND status='committed' ORDER BY created_at DESC, seq DESC "
                "LIMIT ?",
                (scope, limit),
            ).fetchall()
        return [StoredMessage(*row) for row in reversed(rows)]

    def recent_memory_ids(self, scope: dict[str, str], limit: int) -> list[str]:
        """Ids of the scope's most recently added memories, newest first."""
        if limit <= 0 or not scope:
            return []
        clauses = " AND ".join(f"{key}=?" for key in scope)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT memory_id FROM history WHERE {clauses} AND event='ADD' "
                "AND status='committed' ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (*scope.values(), limit),
            ).fetchall()
        return [row[0] for row in rows]

    def delete_scope_messages(self, conn: sqlite3.Connection, scope: dict[str, str]) -> None:
        """Inside a transaction: drop the messages whose scope ids include ``scope``'s."""
        if not scope:
            raise ValueError("refusing to delete the messages of an empty scope")
        clauses = " AND ".join(f"{key}=?" for key in scope)
        conn.execute(f"DELETE FROM messages WHERE {clauses}", tuple(scope.values()))

    # -- bookkeeping: the meta table and the store/history agreement ------------------------

    def meta(self, key: str) -> str | None:
        """A bookkeeping value (``None`` if unset)."""
        with self.snapshot() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str | None) -> None:
        """Set (or, with ``None``, clear) a bookkeeping value."""
        with self.transaction() as conn:
            if value is None:
                conn.execute("DELETE FROM meta WHERE key=?", (key,))
            else:
                conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def bind_collection(self, name: str) -> set[str]:
        """Record that collection ``name`` uses this database; returns the collections
        recorded before (empty for a database no collection has used yet)."""
        with self.snapshot() as conn:
            rows = conn.execute("SELECT key FROM meta WHERE key LIKE 'collection:%'").fetchall()
        bound = {row[0].removeprefix("collection:") for row in rows}
        if name not in bound:
            with self.transaction() as conn:
                conn.execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
                    (f"collection:{name}", "bound"),
                )
        return bound

    def has_writes(self) -> bool:
        """Whether any write ever reached this history: a journal entry or a history row,
        committed or not (every write journals itself before it touches the store)."""
        with self.snapshot() as conn:
            row = conn.execute(
                "SELECT 1 FROM journal UNION ALL SELECT 1 FROM history LIMIT 1"
            ).fetchone()
        return row is not None

    def has_live_memories(self) -> bool:
        """Whether some memory has a committed ADD and no DELETE (cheap: stops at the first)."""
        with self.snapshot() as conn:
            row = conn.execute(
                "SELECT 1 FROM history h WHERE h.event='ADD' AND h.status='committed' AND "
                "NOT EXISTS (SELECT 1 FROM history d WHERE d.memory_id=h.memory_id "
                "AND d.status='committed' AND d.event='DELETE') LIMIT 1"
            ).fetchone()
        return row is not None

    def live_memory_ids(self) -> set[str]:
        """Every memory with a committed ADD and no DELETE (a full scan, for the doctor)."""
        with self.snapshot() as conn:
            rows = conn.execute(
                "SELECT memory_id FROM history WHERE status='committed' GROUP BY memory_id "
                "HAVING MAX(event='ADD') = 1 AND MAX(event='DELETE') = 0"
            ).fetchall()
        return {row[0] for row in rows}

    def reset(self) -> None:
        """Delete every history, message and journal row (the meta table is kept)."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM history")
            conn.execute("DELETE FROM messages")
            conn.execute("DELETE FROM journal")

    def close(self) -> None:
        """Close the connection. Idempotent."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()
                self._owner.release()


BUSY_TIMEOUT_S = 10.0
"""How long opening or writing waits for another connection's lock before failing."""


def _open(path: str) -> tuple[sqlite3.Connection, bool]:
    """A connection to ``path`` with its schema in place, and whether the database was new.

    While another process opens, checkpoints or closes the same file, SQLite can answer
    "database is locked" at once, without its busy handler (switching a new file to WAL,
    recovering the WAL index); the open is retried until :data:`BUSY_TIMEOUT_S`.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    delay = 0.02
    while True:
        conn = _connect(path)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            return conn, ensure_schema(conn, path)
        except sqlite3.Error as exc:
            conn.close()
            busy = isinstance(exc, sqlite3.OperationalError) and _is_busy(exc)
            if busy and time.monotonic() + delay < deadline:
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
                continue
            raise HistoryError(
                f"cannot open history database {path}: {exc}",
                hint="The file is not a SQLite database, or another process holds it locked; "
                "check history_db_path.",
                details={"path": path},
            ) from exc
        except BaseException:
            conn.close()
            raise


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def _connect(path: str) -> sqlite3.Connection:
    """An autocommit connection to ``path``, its folder created if needed."""
    try:
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            if Path(path).is_dir():
                raise IsADirectoryError(f"{path} is a directory")
        return sqlite3.connect(
            path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_S
        )
    except (OSError, sqlite3.Error) as exc:
        raise HistoryError(
            f"cannot open history database {path}: {exc}",
            hint="Point history_db_path (or MEMOWEAVE_HOME) at a writable folder, not a file.",
            details={"path": path},
        ) from exc


def _event_value(event: HistoryEvent, column: str) -> Any:
    value = getattr(event, column)
    return int(value) if isinstance(value, bool) else value
