"""Per-scope caches of the side indexes, kept current by this process's own writes.

An index keeps, for recently searched scopes, a summary it can change in place (BM25
postings, entity links: an *entry*). Whether an entry is current is told by the scope's
*write token* in the ``index_tokens`` table of the history database:

- every index write, inside the history's commit transaction, gives each scope the
  written memory belongs to a new random token: every non-empty subset of its identity
  keys (a memory of user ``u`` and run ``r`` is in the scopes ``{u}``, ``{r}`` and
  ``{u, r}``). Removing every memory of a scope, or all of them, changes the *epoch*
  token instead, which every entry holds too;
- an entry holds the (scope token, epoch) it is current at. When this process writes a
  scope, an entry holding the token being replaced is current up to that write: it takes
  the new token and the index applies the write's change to it (O(text)); any other
  entry of the scope is dropped;
- a search reads the scope's token and the epoch (one indexed lookup) and rebuilds an
  entry that holds another: another connection wrote the scope, or this process's write
  rolled back after its change was applied (its token never committed);
- a process's first search of a scope (no entry of it, or one dropped) builds it with
  ``hold=False``: an index may then keep statistics only and answer from its tables in
  SQLite (exactly the same results), so a one-off search (a CLI call) of a large scope
  pays no Python pass over it; a later search of such an entry (``deferred``) builds it
  again with ``hold=True``.

Tokens are random 62-bit numbers, never reused, so a rolled-back token cannot come back
as another write's. A write to one scope leaves every other scope's entries current, in
this process and in every other process sharing the database. Entries, their changes and
the lookups run while the caller holds the history's connection (inside ``snapshot()``
or ``transaction()``), which serialises them.
"""

from __future__ import annotations

import itertools
import json
import secrets
import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Generic, Protocol, TypeVar

IDENTITY_KEYS = ("user_id", "agent_id", "run_id")
ScopeId = tuple[str | None, str | None, str | None]
"""A scope as (user_id, agent_id, run_id), ``None`` for an unset key."""
Statuses = tuple[str, ...]
Version = tuple[int, int]
"""(scope token, epoch token) an entry is current at."""
STALE: Version = (-1, -1)
"""The version of an entry that must be rebuilt (no scope ever has it)."""

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS index_tokens (namespace TEXT NOT NULL, scope TEXT NOT NULL, "
    "token INTEGER NOT NULL, PRIMARY KEY (namespace, scope)) WITHOUT ROWID",
)
_EPOCH = "*"
MAX_ENTRIES = 4096


class Entry(Protocol):
    """What the cache needs of an index's entry."""

    version: Version

    @property
    def held(self) -> int:
        """Documents it holds in memory (counted against the cache's budget)."""
        ...

    @property
    def deferred(self) -> bool:
        """Whether it holds statistics only although its scope is small enough to hold."""
        ...


E = TypeVar("E", bound=Entry)
T = TypeVar("T")


def scope_id(keys: Mapping[str, str | None]) -> ScopeId:
    """The :data:`ScopeId` of a scope's identity keys."""
    return (keys.get("user_id"), keys.get("agent_id"), keys.get("run_id"))


def scope_keys(scope: ScopeId) -> dict[str, str]:
    """The identity keys ``scope`` sets (the inverse of :func:`scope_id`)."""
    return {k: v for k, v in zip(IDENTITY_KEYS, scope, strict=True) if v is not None}


def scope_condition(keys: Mapping[str, str]) -> tuple[str, list[object]]:
    """The SQL condition selecting the rows of the scope of ``keys`` (its set identity
    keys, columns of the same names) and its parameters."""
    return " AND ".join(f"{k} = ?" for k in keys), list(keys.values())


def scopes_of(memory: ScopeId) -> Iterator[ScopeId]:
    """Every scope a memory with these ids is in (each non-empty subset of its set keys)."""
    present = [i for i, value in enumerate(memory) if value is not None]
    for size in range(1, len(present) + 1):
        for chosen in itertools.combinations(present, size):
            yield (
                memory[0] if 0 in chosen else None,
                memory[1] if 1 in chosen else None,
                memory[2] if 2 in chosen else None,
            )


def chunks(values: list[T], size: int = 500) -> Iterator[list[T]]:
    """``values`` in consecutive lists of at most ``size`` (SQLite's bound parameters)."""
    for start in range(0, len(values), size):
        yield values[start : start + size]


def scope_name(scope: ScopeId) -> str:
    """A scope's name in the tables (JSON of its ids, so no separator is ambiguous)."""
    return json.dumps(scope, ensure_ascii=False, separators=(",", ":"))


def _new_token() -> int:
    return secrets.randbits(62) + 1


class ScopeCache(Generic[E]):
    """One index's entries by (scope, statuses), least recently searched dropped first
    beyond ``budget`` held documents (see the module docstring)."""

    def __init__(self, namespace: str, budget: int) -> None:
        self._namespace = namespace
        self._budget = budget
        self._entries: OrderedDict[tuple[ScopeId, Statuses], E] = OrderedDict()
        self._statuses: dict[ScopeId, set[Statuses]] = {}

    def get(
        self,
        conn: sqlite3.Connection,
        scope: ScopeId,
        statuses: Statuses,
        build: Callable[[Version, bool], E],
    ) -> E:
        """Inside a snapshot: the scope's entry, rebuilt by ``build(version, hold)`` unless
        current and not deferred; ``hold`` is false when this cache has no entry of the key
        (see the module docstring)."""
        version = self._version(conn, scope)
        key = (scope, statuses)
        entry = self._entries.get(key)
        if entry is not None and entry.version == version and not entry.deferred:
            self._entries.move_to_end(key)
            return entry
        hold = entry is not None
        self._drop(key)
        entry = build(version, hold)
        self._entries[key] = entry
        self._statuses.setdefault(scope, set()).add(statuses)
        self._trim()
        return entry

    def touch(self, conn: sqlite3.Connection, memories: Iterable[ScopeId]) -> None:
        """Inside a write transaction: new tokens for every scope of ``memories``; the
        entries current until now stay current (the caller then applies the write to
        them, :meth:`holding`), the others are dropped."""
        scopes = {s for memory in memories for s in scopes_of(memory)}
        if not scopes:
            return
        epoch = self._token(conn, _EPOCH)
        for scope in scopes:
            name = scope_name(scope)
            old, new = (self._token(conn, name), epoch), _new_token()
            self._set(conn, name, new)
            for statuses in list(self._statuses.get(scope, ())):
                entry = self._entries[(scope, statuses)]
                if entry.version == old:
                    entry.version = (new, epoch)
                else:
                    self._drop((scope, statuses))

    def touch_all(self, conn: sqlite3.Connection) -> None:
        """Inside a write transaction: a new epoch (every entry of every process is
        stale); drops this process's entries."""
        self._set(conn, _EPOCH, _new_token())
        self._entries.clear()
        self._statuses.clear()

    def holding(self, memory: ScopeId, status: str) -> Iterator[E]:
        """The entries a memory of these ids and ``status`` belongs to."""
        for scope in scopes_of(memory):
            for statuses in self._statuses.get(scope, ()):
                if status in statuses:
                    yield self._entries[(scope, statuses)]

    def _version(self, conn: sqlite3.Connection, scope: ScopeId) -> Version:
        rows = dict(
            conn.execute(
                "SELECT scope, token FROM index_tokens WHERE namespace = ? AND scope IN (?, ?)",
                (self._namespace, scope_name(scope), _EPOCH),
            ).fetchall()
        )
        epoch = rows.pop(_EPOCH, 0)
        return (next(iter(rows.values()), 0), epoch)

    def _token(self, conn: sqlite3.Connection, name: str) -> int:
        row = conn.execute(
            "SELECT token FROM index_tokens WHERE namespace = ? AND scope = ?",
            (self._namespace, name),
        ).fetchone()
        return int(row[0]) if row is not None else 0

    def _set(self, conn: sqlite3.Connection, name: str, token: int) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO index_tokens(namespace, scope, token) VALUES (?, ?, ?)",
            (self._namespace, name, token),
        )

    def _drop(self, key: tuple[ScopeId, Statuses]) -> None:
        if self._entries.pop(key, None) is not None:
            statuses = self._statuses[key[0]]
            statuses.discard(key[1])
            if not statuses:
                del self._statuses[key[0]]

    @property
    def held(self) -> int:
        """Documents held over all entries (bounded by the budget)."""
        return sum(e.held for e in self._entries.values())

    def _trim(self) -> None:
        held = self.held
        while len(self._entries) > 1 and (held > self._budget or len(self) > MAX_ENTRIES):
            key = next(iter(self._entries))
            held -= self._entries[key].held
            self._drop(key)

    def __contains__(self, key: object) -> bool:
        """Whether an entry (current or not) of this (scope, statuses) is held."""
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)
