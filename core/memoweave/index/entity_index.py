"""Entity links: which memory mentions which entity, in a table beside the history.

Rows are written in the same commit transaction as the history and the keyword index
(an ``on_commit`` hook of the write plan), so links follow every add, update,
supersession and delete; a failed write leaves none behind. Entities come from
:func:`memoweave.index.entities.extract_entities`.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from memoweave.index import keyword_postings
from memoweave.index.contracts import Database, ScopeKeys
from memoweave.index.entities import extract_entities
from memoweave.index.keyword_index import KeywordDoc
from memoweave.index.keyword_postings import CACHE_TOTAL_DOCS
from memoweave.index.scope_cache import SCHEMA as SCOPE_CACHE_SCHEMA
from memoweave.index.scope_cache import (
    STALE,
    ScopeCache,
    ScopeId,
    Version,
    chunks,
    scope_condition,
    scope_id,
    scope_keys,
)
from memoweave.index.scope_stats import Counted, ScopeStats, TermStats

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS entity_links (memory_id TEXT NOT NULL, entity TEXT NOT NULL, "
    "user_id TEXT, agent_id TEXT, run_id TEXT, status TEXT NOT NULL, "
    "PRIMARY KEY (memory_id, entity))",
    "CREATE INDEX IF NOT EXISTS entity_links_entity ON entity_links(entity, status)",
    # a user scope's links, covering its memory ids: counting a scope's memories with
    # entities (a first search's IDF base) reads the index alone, 455 -> 30-50 ms CPU at
    # 100k memories in one scope (290k links; the build, once for an older home, 0.7 s),
    # and it replaces the (user_id, status) index it extends
    "CREATE INDEX IF NOT EXISTS entity_links_user_memory "
    "ON entity_links(user_id, status, memory_id)",
    "DROP INDEX IF EXISTS entity_links_user",
    # agent and run scopes: partial, so a home whose memories have no agent / run id pays
    # nothing for them (built once when an older home is opened: ~0.3 s each at 2.9M
    # links without such ids); without them such a scope's lookup scans every link
    "CREATE INDEX IF NOT EXISTS entity_links_agent ON entity_links(agent_id, status) "
    "WHERE agent_id IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS entity_links_run ON entity_links(run_id, status) "
    "WHERE run_id IS NOT NULL",
)


@dataclass(frozen=True)
class EntityMatches:
    """What the index knows about a query's entities within one scope.

    ``weight`` maps each query entity found in the scope to its normalised IDF,
    ``log(1 + N / df) / log(1 + N)`` in (0, 1] (N: memories of the scope with entities);
    ``links`` maps each asked memory id to the query entities it mentions.
    """

    weight: dict[str, float]
    links: dict[str, tuple[str, ...]]

    def score(self, memory_id: str) -> float:
        """Sum of the weights of the query entities ``memory_id`` mentions, capped at 1."""
        return min(1.0, sum(self.weight[e] for e in self.links.get(memory_id, ())))


@dataclass
class ScopeLinks:
    """One scope's memories with entities (``total``) and, for a scope small enough to
    hold, its links by entity (``None`` otherwise; ``df`` then remembers how many memories
    mention each entity searches asked for); changed in place by this process's writes
    (see :mod:`memoweave.index.scope_cache`)."""

    version: Version
    total: int
    by_entity: dict[str, set[str]] | None
    df: dict[str, int] = field(default_factory=dict)

    @property
    def held(self) -> int:
        """Memories whose links are held (0 for a count-only entry)."""
        return self.total if self.by_entity is not None else 0

    @property
    def deferred(self) -> bool:
        """Counts only, though small enough to hold (a process's first search)."""
        return self.by_entity is None and self.total <= keyword_postings.CACHE_MAX_DOCS

    def add(self, memory_id: str, entities: Sequence[str]) -> None:
        """Count a memory linked to ``entities`` (none: not counted)."""
        if not entities:
            return
        self.total += 1
        if self.by_entity is None:
            self._count(entities, 1)
            return
        if self.total > keyword_postings.CACHE_MAX_DOCS:
            self.by_entity = None
            return
        for entity in entities:
            self.by_entity.setdefault(entity, set()).add(memory_id)

    def remove(self, memory_id: str, entities: Sequence[str]) -> None:
        """Forget a memory counted with ``entities``."""
        if not entities:
            return
        self.total -= 1
        if self.by_entity is None:
            self._count(entities, -1)
            if self.total <= keyword_postings.CACHE_MAX_DOCS:  # as a rebuild would hold it
                self.version = STALE
            return
        for entity in entities:
            linked = self.by_entity[entity]
            linked.discard(memory_id)
            if not linked:
                del self.by_entity[entity]

    def _count(self, entities: Sequence[str], change: int) -> None:
        for entity in entities:
            if entity in self.df:
                self.df[entity] += change

    def remember_df(self, df: dict[str, int]) -> None:
        """Remember entity counts read from the table (as of this entry's version)."""
        if len(self.df) + len(df) > keyword_postings.MAX_KNOWN_DF:
            self.df.clear()
        self.df.update(df)


Links = dict[str, tuple[KeywordDoc, list[str]]]
"""Memory id -> (the memory, its entities)."""


class EntityIndex:
    """The ``entity_links`` table of one history database."""

    def __init__(self, history: Database) -> None:
        self._history = history
        self._cache: ScopeCache[ScopeLinks] = ScopeCache("entity", CACHE_TOTAL_DOCS)
        self._stats = ScopeStats("entity", _scope_terms)
        with history.transaction() as conn:
            for statement in (*SCOPE_CACHE_SCHEMA, *_SCHEMA):
                conn.execute(statement)
            self._stats.open(conn, _scope_groups)

    def upsert(self, conn: sqlite3.Connection, docs: Iterable[KeywordDoc]) -> None:
        """Inside a transaction: link each doc to its entities, replacing older links."""
        docs = list(docs)
        old = self._remove(conn, [d.memory_id for d in docs])
        new = [(d, list(dict.fromkeys(extract_entities(d.text)))) for d in docs]
        new = [(d, entities) for d, entities in new if entities]
        conn.executemany(
            "INSERT OR IGNORE INTO entity_links(memory_id, entity, user_id, agent_id, run_id, "
            "status) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (d.memory_id, entity, d.user_id, d.agent_id, d.run_id, d.status)
                for d, entities in new
                for entity in entities
            ],
        )
        self._cache.touch(conn, [*(d.scope for d, _ in old.values()), *(d.scope for d, _ in new)])
        self._stats.apply(conn, _counted(old.values()), _counted(new))
        self._apply(old, new)

    def delete(self, conn: sqlite3.Connection, memory_ids: Sequence[str]) -> None:
        """Inside a transaction: drop every link of ``memory_ids``."""
        old = self._remove(conn, memory_ids)
        self._cache.touch(conn, [d.scope for d, _ in old.values()])
        self._stats.apply(conn, _counted(old.values()), [])
        self._apply(old, [])

    def _remove(self, conn: sqlite3.Connection, memory_ids: Sequence[str]) -> Links:
        """Delete the links of ``memory_ids``; the memories that had some, with them."""
        old: Links = {}
        for chunk in chunks(list(dict.fromkeys(memory_ids))):
            for memory_id, entity, user_id, agent_id, run_id, status in conn.execute(
                "SELECT memory_id, entity, user_id, agent_id, run_id, status FROM entity_links "
                f"WHERE {_in('memory_id', chunk)}",
                chunk,
            ):
                doc = KeywordDoc(memory_id, "", user_id, agent_id, run_id, status)
                old.setdefault(memory_id, (doc, []))[1].append(entity)
        conn.executemany("DELETE FROM entity_links WHERE memory_id = ?", [(i,) for i in old])
        return old

    def _apply(self, removed: Links, added: list[tuple[KeywordDoc, list[str]]]) -> None:
        """Apply a write's removed and added links to the current cached entries."""
        for doc, entities in removed.values():
            for entry in self._cache.holding(doc.scope, doc.status):
                entry.remove(doc.memory_id, entities)
        for doc, entities in added:
            for entry in self._cache.holding(doc.scope, doc.status):
                entry.add(doc.memory_id, entities)

    def delete_scope(self, conn: sqlite3.Connection, scope: ScopeKeys) -> None:
        """Inside a transaction: drop every link of ``scope``."""
        clauses, params = scope_condition(scope.as_dict())
        removed = list(_counted_links(conn, clauses, params))
        conn.execute(f"DELETE FROM entity_links WHERE {clauses}", params)
        self._stats.apply(conn, removed, [])
        self._cache.touch_all(conn)

    def entities_of(self, memory_id: str) -> list[str]:
        """The entities linked to one memory, sorted."""
        with self._history.snapshot() as conn:
            rows = conn.execute(
                "SELECT entity FROM entity_links WHERE memory_id = ? ORDER BY entity", (memory_id,)
            ).fetchall()
        return [r[0] for r in rows]

    def match(
        self,
        entities: Sequence[str],
        scope: ScopeKeys,
        memory_ids: Sequence[str],
        statuses: Sequence[str],
    ) -> EntityMatches:
        """Weights of ``entities`` in ``scope`` and which of ``memory_ids`` mention them."""
        if not entities or not memory_ids or not statuses:
            return EntityMatches({}, {})
        keys = scope.as_dict()
        where = " AND ".join([*(f"{k} = ?" for k in keys), _in("status", statuses)])
        base = [*keys.values(), *statuses]
        key = (scope_id(keys), tuple(sorted(set(statuses))))
        with self._history.snapshot() as conn:
            counted = None if key in self._cache else self._stats.counts(conn, *key)[0]
            if counted is not None and counted <= keyword_postings.SCANNED_MAX_DOCS:
                total, found = _small_scope(conn, entities, where, base)  # read whole
            else:
                links = self._cache.get(
                    conn,
                    *key,
                    lambda version, hold: self._build(
                        conn,
                        where,
                        base,
                        version,
                        hold,
                        self._stats.counts(conn, *key)[0] if counted is None else counted,
                    ),
                )
                total = links.total
                if links.by_entity is None:
                    df, rows = self._match_sql(conn, entities, memory_ids, where, base, links, key)
                    return _matches(total, df, rows)
                found = {e: links.by_entity[e] for e in entities if e in links.by_entity}
        asked = dict.fromkeys(memory_ids)
        rows = [(i, e) for i in asked for e, ids in found.items() if i in ids]
        return _matches(total, {e: len(ids) for e, ids in found.items()}, rows)

    @staticmethod
    def _build(
        conn: sqlite3.Connection,
        where: str,
        params: Sequence[object],
        version: Version,
        hold: bool,
        total: int,
    ) -> ScopeLinks:
        """The scope's entry of ``total`` memories with entities (links read from the
        table only if small enough, and if ``hold`` or small enough to hold from a first
        search)."""
        if total > keyword_postings.CACHE_MAX_DOCS or (
            not hold and total > keyword_postings.HELD_FROM_FIRST_SEARCH
        ):
            return ScopeLinks(version, total, None)
        by_entity: dict[str, set[str]] = {}
        for memory_id, entity in _scope_links(conn, where, params):
            by_entity.setdefault(entity, set()).add(memory_id)
        return ScopeLinks(version, total, by_entity)

    def _match_sql(
        self,
        conn: sqlite3.Connection,
        entities: Sequence[str],
        memory_ids: Sequence[str],
        where: str,
        base: Sequence[object],
        links: ScopeLinks,
        key: tuple[ScopeId, tuple[str, ...]],
    ) -> tuple[dict[str, int], list[tuple[str, str]]]:
        """(count of each entity found, (memory id, entity) links of ``memory_ids``) read
        from the table, for scopes too large to hold; an entity's count is read once per
        entry (the entry keeps it current), from the scope's statistics
        (:mod:`.scope_stats`) if it keeps them."""
        scope, statuses = key
        unknown = [e for e in dict.fromkeys(entities) if e not in links.df]
        kept = self._stats.terms(conn, scope, statuses, unknown) if unknown else None
        if kept is not None:
            links.remember_df({e: df for e, (df, _, _) in kept.items()})
        elif unknown:
            counted = conn.execute(
                "SELECT entity, COUNT(*) FROM entity_links INDEXED BY entity_links_entity "
                f"WHERE {_in('entity', unknown)} AND {where} GROUP BY entity",
                [*unknown, *base],
            ).fetchall()
            links.remember_df({**dict.fromkeys(unknown, 0), **dict(counted)})
        df = {e: links.df[e] for e in entities if links.df[e]}
        if not df:
            return {}, []
        asked = list(dict.fromkeys(memory_ids))
        rows = conn.execute(  # by the primary key; the scope is checked here, not by SQLite
            "SELECT memory_id, entity, user_id, agent_id, run_id, status FROM entity_links "
            f"WHERE {_in('memory_id', asked)} AND {_in('entity', list(df))}",
            [*asked, *df],
        ).fetchall()
        rank = {e: n for n, e in enumerate(df)}  # a memory's entities in query order, as held
        rows.sort(key=lambda row: rank[row[1]])
        return df, [
            (memory_id, entity)
            for memory_id, entity, *ids, status in rows
            if status in statuses
            and all(v == w for v, w in zip(ids, scope, strict=True) if w is not None)
        ]

    def reset(self) -> None:
        """Remove every link."""
        with self._history.transaction() as conn:
            conn.execute("DELETE FROM entity_links")
            self._stats.clear(conn)
            self._cache.touch_all(conn)


def _matches(total: int, df: dict[str, int], rows: list[tuple[str, str]]) -> EntityMatches:
    """The matches of a scope of ``total`` memories with entities, ``df`` memories
    mentioning each query entity found, and the (memory id, entity) links asked for."""
    if not df:
        return EntityMatches({}, {})
    norm = math.log(1 + max(total, 1))
    weight = {e: math.log(1 + max(total, 1) / n) / norm for e, n in df.items()}
    linked: dict[str, list[str]] = {}
    for memory_id, entity in rows:
        linked.setdefault(memory_id, []).append(entity)
    return EntityMatches(weight, {k: tuple(v) for k, v in linked.items()})


def _counted(links: Iterable[tuple[KeywordDoc, list[str]]]) -> list[Counted]:
    return [Counted(d.scope, d.status, 0, entities) for d, entities in links]


def _counted_links(
    conn: sqlite3.Connection, where: str, params: Sequence[object]
) -> Iterator[Counted]:
    """The memories with links ``where`` selects, as statistics count them."""
    linked: dict[str, tuple[ScopeId, str, list[str]]] = {}
    for memory_id, entity, user_id, agent_id, run_id, status in conn.execute(
        "SELECT memory_id, entity, user_id, agent_id, run_id, status FROM entity_links "
        f"WHERE {where}",
        params,
    ):
        linked.setdefault(memory_id, ((user_id, agent_id, run_id), status, []))[2].append(entity)
    for scope, status, entities in linked.values():
        yield Counted(scope, status, 0, entities)


def _scope_terms(conn: sqlite3.Connection, scope: ScopeId) -> Iterator[tuple[str, str, TermStats]]:
    """(entity, status, (memories linked, the same, 0)) of every entity of ``scope``."""
    where, params = scope_condition(scope_keys(scope))
    for entity, status, linked in conn.execute(
        f"SELECT entity, status, COUNT(*) FROM entity_links WHERE {where} GROUP BY entity, status",
        params,
    ):
        yield entity, status, (int(linked), int(linked), 0)


def _scope_groups(conn: sqlite3.Connection) -> Iterator[tuple[ScopeId, str, int, int]]:
    """(ids, status, memories with links, 0) of each group of links with the same."""
    for user_id, agent_id, run_id, status, memories in conn.execute(
        "SELECT user_id, agent_id, run_id, status, COUNT(DISTINCT memory_id) "
        "FROM entity_links GROUP BY user_id, agent_id, run_id, status"
    ):
        yield (user_id, agent_id, run_id), status, int(memories), 0


def _small_scope(
    conn: sqlite3.Connection, entities: Sequence[str], where: str, params: Sequence[object]
) -> tuple[int, dict[str, set[str]]]:
    """A small scope read whole (``where`` selects its links): its memories with entities
    and the memories mentioning each of ``entities`` it has (query order)."""
    linked: set[str] = set()
    found: dict[str, set[str]] = {e: set() for e in entities}
    for memory_id, entity in _scope_links(conn, where, params):
        linked.add(memory_id)
        if entity in found:
            found[entity].add(memory_id)
    return len(linked), {e: ids for e, ids in found.items() if ids}


def _scope_links(conn: sqlite3.Connection, where: str, params: Sequence[object]) -> sqlite3.Cursor:
    """The (memory id, entity) links of the scope ``where`` selects."""
    return conn.execute(f"SELECT memory_id, entity FROM entity_links WHERE {where}", params)


def _in(column: str, values: Sequence[object]) -> str:
    return f"{column} IN ({', '.join('?' * len(values))})"
