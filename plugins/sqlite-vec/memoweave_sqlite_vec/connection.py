"""Opening the database: APSW's SQLite with sqlite-vec loaded, WAL, busy timeout, schema.

One file holds every collection: ``mw_collections`` (name, dims, metric) and
``mw_records``, one row per record with its payload as JSON text, its vector as a float32
blob (sqlite-vec's format) and its L2 norm, plus the typed filter columns of
:mod:`memoweave_sqlite_vec.filters`, indexed per collection. WAL lets any number of
processes read while one writes; a writer waits up to ``busy_timeout_ms`` for another.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from memoweave.errors import MemoweaveError, VectorStoreError
from memoweave.providers.vector_store import EXPIRY_KEY, HASH_KEY, SCOPE_KEYS, STATUS_KEY
from memoweave_sqlite_vec.config import SqliteVecStoreConfig
from memoweave_sqlite_vec.filters import COLUMNS

T = TypeVar("T")

_TYPED = ", ".join(
    f"{key} {'TEXT' if family == 'text' else ''}" for key, (family, _) in COLUMNS.items()
)
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS mw_collections (name TEXT PRIMARY KEY, dims INTEGER NOT NULL, "
    "metric TEXT NOT NULL)",
    # the numeric column has no declared type (no affinity): ints stay ints, floats floats
    f"CREATE TABLE IF NOT EXISTS mw_records (collection TEXT NOT NULL, id TEXT NOT NULL, "
    f"{_TYPED}, mw_other INTEGER NOT NULL DEFAULT 0, payload TEXT NOT NULL, "
    "vector BLOB NOT NULL, norm REAL NOT NULL, UNIQUE (collection, id))",
    # a scope's rows, by lifecycle status (status alone is never selective: no index of
    # its own, so the planner cannot prefer it to the scope's)
    *(
        f"CREATE INDEX IF NOT EXISTS mw_records_{key}_status ON mw_records "
        f"(collection, {key}, {STATUS_KEY})"
        for key in SCOPE_KEYS
    ),
    f"CREATE INDEX IF NOT EXISTS mw_records_{HASH_KEY} ON mw_records (collection, {HASH_KEY})",
    # indexes of the first layout, which let the planner scan a whole collection by status
    *(f"DROP INDEX IF EXISTS mw_records_{key}" for key in (*SCOPE_KEYS, STATUS_KEY, EXPIRY_KEY)),
)
BUSY_HINT = (
    "Another process held the write lock longer than busy_timeout_ms; raise busy_timeout_ms "
    "in the sqlite-vec store config, or make that process's writes shorter."
)


def _apsw() -> Any:
    import apsw

    return apsw


def engine_error(action: str, exc: BaseException, where: str) -> VectorStoreError:
    """A ``VectorStoreError`` carrying the engine's message (busy: with the hint)."""
    message = str(exc) or type(exc).__name__
    busy = type(exc).__name__ in ("BusyError", "LockedError")
    return VectorStoreError(
        f"sqlite-vec {action} failed on {where}: {message}",
        hint=BUSY_HINT if busy else None,
        details={"action": action, "location": where, "engine_message": message},
    )


def guarded(action: str, where: str, fn: Callable[[], T]) -> T:
    """``fn()`` with engine exceptions turned into ``VectorStoreError``."""
    try:
        return fn()
    except MemoweaveError:
        raise
    except Exception as exc:
        raise engine_error(action, exc, where) from exc


def open_connection(config: SqliteVecStoreConfig) -> Any:
    """A connection with sqlite-vec loaded, ``mw_casefold`` registered and the schema made."""
    import sqlite_vec

    apsw = _apsw()
    if config.path != ":memory:":
        Path(config.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
    path = config.path if config.path == ":memory:" else str(Path(config.path).expanduser())
    conn = apsw.Connection(path)
    try:
        conn.set_busy_timeout(config.busy_timeout_ms)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
        conn.create_scalar_function("mw_casefold", _casefold, 1, deterministic=True)
        if path != ":memory:":
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={config.synchronous}")
        with transaction(conn):
            conn.execute(SCHEMA[0])
            conn.execute(SCHEMA[1])
            _add_missing_columns(conn)
            for statement in SCHEMA[2:]:
                conn.execute(statement)
    except BaseException:
        conn.close()
        raise
    return conn


@contextlib.contextmanager
def transaction(conn: Any) -> Iterator[Any]:
    """One write transaction that takes the write lock at once (waiting up to the busy
    timeout), committed on success and rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _add_missing_columns(conn: Any) -> None:
    """Inside the schema transaction: add typed columns newer than the file, filled from
    the payloads (so filters on them stay exact)."""
    present = {row[1] for row in conn.execute("PRAGMA table_info(mw_records)")}
    for key, (family, bit) in COLUMNS.items():
        if key in present:
            continue
        conn.execute(
            f"ALTER TABLE mw_records ADD COLUMN {key} {'TEXT' if family == 'text' else ''}"
        )
        kind, value = f"json_type(payload, '$.{key}')", f"json_extract(payload, '$.{key}')"
        fits = (
            f"{kind} = 'text' AND instr({value}, char(0)) = 0"
            if family == "text"
            else f"{kind} IN ('integer', 'real')"
        )
        conn.execute(
            f"UPDATE mw_records SET {key} = CASE WHEN {fits} THEN {value} END, "
            f"mw_other = mw_other | CASE WHEN NOT COALESCE({fits}, 0) "
            f"AND COALESCE({kind}, 'null') != 'null' THEN {bit} ELSE 0 END"
        )


def _casefold(value: object) -> object:
    return value.casefold() if isinstance(value, str) else None
