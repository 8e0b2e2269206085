"""Opening the history database while another process holds it: a lock SQLite reports
at once (without its busy handler) is waited out, anything else fails typed at once."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from memoweave import HistoryError
from memoweave.memory import history as history_module
from memoweave.memory.history import HistoryStore


def test_an_open_waits_out_a_lock_reported_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = history_module.ensure_schema
    answers = iter([sqlite3.OperationalError("database is locked")] * 2)

    def locked_twice(conn: sqlite3.Connection, path: str) -> bool:
        error = next(answers, None)
        if error is not None:
            raise error
        return real(conn, path)

    monkeypatch.setattr(history_module, "ensure_schema", locked_twice)
    store = HistoryStore(tmp_path / "history.db")
    assert store.created and store.has_writes() is False
    store.close()


def test_an_exclusive_lock_held_by_another_connection_is_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    HistoryStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("PRAGMA journal_mode=DELETE")  # a rollback journal: EXCLUSIVE bars readers
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    release.start()
    started = time.monotonic()
    store = HistoryStore(path)
    assert time.monotonic() - started >= 0.4
    assert store.created is False
    store.close()
    release.join()
    holder.close()


def test_other_errors_are_not_retried(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    path.write_bytes(b"not a database, " * 64)
    started = time.monotonic()
    with pytest.raises(HistoryError, match="cannot open history database"):
        HistoryStore(path)
    assert time.monotonic() - started < 2
