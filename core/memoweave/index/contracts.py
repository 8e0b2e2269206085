"""What the indexes need from the code that hosts them, as structural types.

The indexes keep their tables in the history's SQLite database and are keyed by scope,
but they import neither: :class:`Database` is anything with ``transaction()`` and
``snapshot()`` connections (``memoweave.memory.history.HistoryStore`` is one) and
:class:`ScopeKeys` anything that names its identity keys (``memoweave.memory.scope.Scope``).
"""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from typing import Protocol


class Database(Protocol):
    """A SQLite database shared with the history."""

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """A block in one write transaction."""
        ...

    def snapshot(self) -> AbstractContextManager[sqlite3.Connection]:
        """A block of reads on one consistent snapshot."""
        ...


class ScopeKeys(Protocol):
    """A scope: the identity keys (``user_id`` / ``agent_id`` / ``run_id``) it sets."""

    def as_dict(self) -> dict[str, str]:
        """The set identity keys and their values."""
        ...
