"""Per-scope statistics of a side index in tables, written with the rows they count.

For every scope a document is in (each non-empty subset of its identity keys,
:func:`.scope_cache.scopes_of`) and each status, ``scope_docs`` holds how many documents
it has and their total length. For scopes of more than :data:`TERMS_KEPT_FROM` documents
(over all statuses; once kept, kept until the index is reset), ``scope_terms`` holds per
term and status how many documents hold it (``df``), how often it occurs in them
(``instances``) and the length of the shortest one holding it (``shortest``: exact but
for removals, which leave it as it was, still a lower bound). A search's first look at a
scope or at a term then reads one row (an index lookup) instead of counting the scope's
rows or the term's matches. Smaller scopes are read whole by their first search, so
their terms are not kept (a home of many small scopes pays nothing per term).

An index calls :meth:`ScopeStats.apply` with the documents a write removed and added,
inside the transaction that changes its rows, so the statistics always equal a recount
of the rows (``shortest`` excepted, as said). A home written before these tables existed
gets them counted once when it is opened (:meth:`ScopeStats.open`).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from memoweave.index.scope_cache import ScopeId, chunks, scope_name, scopes_of

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS index_meta (name TEXT PRIMARY KEY, version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS scope_docs (namespace TEXT NOT NULL, scope TEXT NOT NULL, "
    "status TEXT NOT NULL, docs INTEGER NOT NULL, total_length INTEGER NOT NULL, "
    "PRIMARY KEY (namespace, scope, status)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS scope_terms (namespace TEXT NOT NULL, scope TEXT NOT NULL, "
    "term TEXT NOT NULL, status TEXT NOT NULL, df INTEGER NOT NULL, "
    "instances INTEGER NOT NULL, shortest INTEGER NOT NULL, "
    "PRIMARY KEY (namespace, scope, term, status)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS scope_terms_kept (namespace TEXT NOT NULL, "
    "scope TEXT NOT NULL, PRIMARY KEY (namespace, scope)) WITHOUT ROWID",
)
VERSION = 1
TERMS_KEPT_FROM = 2_000
"""Scopes with more documents than this keep per-term statistics (the size from which
a first search ranks from the tables instead of reading the scope whole,
:data:`.keyword_postings.HELD_FROM_FIRST_SEARCH`)."""


@dataclass(frozen=True)
class Counted:
    """One document as the statistics count it: its scope ids, status, length and terms
    (repeated as often as they occur)."""

    scope: ScopeId
    status: str
    length: int
    terms: Sequence[str]


TermStats = tuple[int, int, int]
"""(documents holding the term, its occurrences in them, the shortest one's length)."""
ScopeTerms = Callable[[sqlite3.Connection, ScopeId], Iterable[tuple[str, str, TermStats]]]
"""(term, status, its statistics) of every term of one scope's documents (any status),
counted from the index's rows (:func:`term_totals` counts them from documents)."""
ScopeGroups = Callable[[sqlite3.Connection], Iterable[tuple[ScopeId, str, int, int]]]
"""(full scope ids, status, documents, total length) of every group of documents with
the same ids and status, read from the index's rows."""


class ScopeStats:
    """One index's statistics (``namespace``) in the history database."""

    def __init__(self, namespace: str, terms: ScopeTerms) -> None:
        self._namespace = namespace
        self._terms = terms

    def open(self, conn: sqlite3.Connection, groups: ScopeGroups) -> None:
        """Inside the schema transaction: create the tables; count them from the rows
        (``groups``, then the kept scopes' rows) if this index has not kept them yet."""
        for statement in SCHEMA:
            conn.execute(statement)
        meta = f"{self._namespace}-stats"
        row = conn.execute("SELECT version FROM index_meta WHERE name = ?", (meta,)).fetchone()
        if row is not None and row[0] >= VERSION:
            return
        self.clear(conn)
        docs: dict[tuple[str, str], list[int]] = {}
        sizes: Counter[ScopeId] = Counter()
        for ids, status, count, total in groups(conn):
            for scope in scopes_of(ids):
                found = docs.setdefault((scope_name(scope), status), [0, 0])
                found[0] += count
                found[1] += total
                sizes[scope] += count
        conn.executemany(
            "INSERT INTO scope_docs(namespace, scope, status, docs, total_length) "
            "VALUES (?, ?, ?, ?, ?)",
            [(self._namespace, name, status, n, t) for (name, status), (n, t) in docs.items()],
        )
        for scope, size in sizes.items():
            if size > TERMS_KEPT_FROM:
                self._keep(conn, scope)
        conn.execute(
            "INSERT OR REPLACE INTO index_meta(name, version) VALUES (?, ?)", (meta, VERSION)
        )

    def clear(self, conn: sqlite3.Connection) -> None:
        """Inside a write transaction: forget every statistic of this index."""
        for table in ("scope_docs", "scope_terms", "scope_terms_kept"):
            conn.execute(f"DELETE FROM {table} WHERE namespace = ?", (self._namespace,))

    def apply(
        self, conn: sqlite3.Connection, removed: Iterable[Counted], added: Iterable[Counted]
    ) -> None:
        """Inside the write transaction that removed and added these documents' rows
        (already written): count the change."""
        docs: dict[tuple[str, str], list[int]] = {}
        changes: dict[ScopeId, list[tuple[int, Counted]]] = {}
        for sign, counted in [(-1, c) for c in removed] + [(1, c) for c in added]:
            for scope in scopes_of(counted.scope):
                found = docs.setdefault((scope_name(scope), counted.status), [0, 0])
                found[0] += sign
                found[1] += sign * counted.length
                changes.setdefault(scope, []).append((sign, counted))
        if not docs:
            return
        self._add_rows(
            conn,
            "scope_docs(namespace, scope, status, docs, total_length) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT DO UPDATE SET docs = docs + excluded.docs, "
            "total_length = total_length + excluded.total_length",
            [(name, status, n, t) for (name, status), (n, t) in docs.items()],
            "scope_docs WHERE namespace = ? AND scope = ? AND status = ? AND docs = 0",
            [(name, status) for name, status in docs],
        )
        names = {scope: scope_name(scope) for scope in changes}
        kept = self._kept(conn, list(names.values()))
        for scope, signed in changes.items():
            if names[scope] in kept:
                self._count_terms(conn, names[scope], signed)
            elif any(sign > 0 for sign, _ in signed) and self._size(conn, names[scope]) > (
                TERMS_KEPT_FROM
            ):
                self._keep(conn, scope)

    def counts(
        self, conn: sqlite3.Connection, scope: ScopeId, statuses: Sequence[str]
    ) -> tuple[int, int]:
        """The scope's documents of ``statuses`` and their total length."""
        docs, total = conn.execute(
            "SELECT COALESCE(SUM(docs), 0), COALESCE(SUM(total_length), 0) FROM scope_docs "
            f"WHERE namespace = ? AND scope = ? AND status IN ({_marks(statuses)})",
            [self._namespace, scope_name(scope), *statuses],
        ).fetchone()
        return int(docs), int(total)

    def terms(
        self,
        conn: sqlite3.Connection,
        scope: ScopeId,
        statuses: Sequence[str],
        terms: Sequence[str],
    ) -> dict[str, TermStats] | None:
        """Each of ``terms``' statistics over the scope's documents of ``statuses``
        ((0, 0, 0) for a term none holds); ``None`` if the scope keeps no term
        statistics (a scope of at most :data:`TERMS_KEPT_FROM` documents)."""
        name = scope_name(scope)
        if not self._kept(conn, [name]):
            return None
        found = conn.execute(
            "SELECT term, SUM(df), SUM(instances), MIN(shortest) FROM scope_terms "
            f"WHERE namespace = ? AND scope = ? AND term IN ({_marks(terms)}) "
            f"AND status IN ({_marks(statuses)}) GROUP BY term",
            [self._namespace, name, *terms, *statuses],
        ).fetchall()
        counted = {term: (int(df), int(n), int(short)) for term, df, n, short in found}
        return {term: counted.get(term, (0, 0, 0)) for term in terms}

    def _count_terms(
        self, conn: sqlite3.Connection, name: str, changes: list[tuple[int, Counted]]
    ) -> None:
        """Count a kept scope's removed (-1) and added (+1) documents' terms."""
        terms = _signed_terms(changes)
        self._add_rows(
            conn,
            "scope_terms(namespace, scope, term, status, df, instances, shortest) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET df = df + excluded.df, "
            "instances = instances + excluded.instances, shortest = CASE "
            "WHEN excluded.shortest < 0 THEN shortest ELSE MIN(shortest, excluded.shortest) END",
            [(name, term, status, *found) for (term, status), found in terms.items()],
            "scope_terms WHERE namespace = ? AND scope = ? AND term = ? AND status = ? AND df = 0",
            [(name, term, status) for (term, status), (df, _, _) in terms.items() if df < 0],
        )

    def _keep(self, conn: sqlite3.Connection, scope: ScopeId) -> None:
        """Start keeping a scope's term statistics: count them from its rows."""
        name = scope_name(scope)
        conn.execute(
            "INSERT OR IGNORE INTO scope_terms_kept(namespace, scope) VALUES (?, ?)",
            (self._namespace, name),
        )
        conn.execute(
            "DELETE FROM scope_terms WHERE namespace = ? AND scope = ?", (self._namespace, name)
        )
        conn.executemany(
            "INSERT INTO scope_terms(namespace, scope, term, status, df, instances, shortest) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (self._namespace, name, t, status, *found)
                for t, status, found in self._terms(conn, scope)
            ],
        )

    def _add_rows(
        self,
        conn: sqlite3.Connection,
        upsert: str,
        rows: list[tuple[object, ...]],
        delete: str,
        emptied: list[tuple[object, ...]],
    ) -> None:
        """Upsert ``rows`` (namespace first), then delete those of ``emptied`` left at 0."""
        conn.executemany(f"INSERT INTO {upsert}", [(self._namespace, *r) for r in rows])
        conn.executemany(f"DELETE FROM {delete}", [(self._namespace, *r) for r in emptied])

    def _kept(self, conn: sqlite3.Connection, names: list[str]) -> set[str]:
        kept: set[str] = set()
        for chunk in chunks(names):
            kept.update(
                name
                for (name,) in conn.execute(
                    "SELECT scope FROM scope_terms_kept "
                    f"WHERE namespace = ? AND scope IN ({_marks(chunk)})",
                    [self._namespace, *chunk],
                )
            )
        return kept

    def _size(self, conn: sqlite3.Connection, name: str) -> int:
        (size,) = conn.execute(
            "SELECT COALESCE(SUM(docs), 0) FROM scope_docs WHERE namespace = ? AND scope = ?",
            (self._namespace, name),
        ).fetchone()
        return int(size)


def _signed_terms(changes: Iterable[tuple[int, Counted]]) -> dict[tuple[str, str], list[int]]:
    """(term, status) -> [change of df, of instances, shortest added document's length
    or -1] of removed (-1) and added (+1) documents."""
    terms: dict[tuple[str, str], list[int]] = {}
    for sign, counted in changes:
        for term, frequency in Counter(counted.terms).items():
            found = terms.setdefault((term, counted.status), [0, 0, -1])
            found[0] += sign
            found[1] += sign * frequency
            if sign > 0 and (found[2] < 0 or counted.length < found[2]):
                found[2] = counted.length
    return terms


def term_totals(docs: Iterable[Counted]) -> Iterator[tuple[str, str, TermStats]]:
    """(term, status, statistics) of every term of ``docs``."""
    for (term, status), (df, instances, shortest) in _signed_terms((1, d) for d in docs).items():
        yield term, status, (df, instances, shortest)


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))
