"""Entity links: which memory mentions which entity, in a table beside the history.

Rows are written in the same commit transaction as the history and the keyword index
(an ``on_commit`` hook of the write plan), so links follow every add, update,
supersession and delete; a failed write leaves none behind. Entities come from
:func:`memoweave.index.entities.extract_entities`.
"""

from __future__ import annotations

import math
import sqlite3
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memoweave.index.contracts import Database, ScopeKeys
from memoweave.index.entities import extract_entities
from memoweave.index.keyword_index import KeywordDoc
from memoweave.index.keyword_postings import (
    CACHE_MAX_DOCS,
    CACHE_TOTAL_DOCS,
    Version,
    data_version,
)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS entity_links (memory_id TEXT NOT NULL, entity TEXT NOT NULL, "
    "user_id TEXT, agent_id TEXT, run_id TEXT, status TEXT NOT NULL, "
    "PRIMARY KEY (memory_id, entity))",
    "CREATE INDEX IF NOT EXISTS entity_links_entity ON entity_links(entity, status)",
    "CREATE INDEX IF NOT EXISTS entity_links_user ON entity_links(user_id, status)",
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


@dataclass(frozen=True)
class _ScopeLinks:
    """One scope's links by entity, tagged with the version they were read at."""

    version: Version
    total: int
    by_entity: dict[str, set[str]]


class EntityIndex:
    """The ``entity_links`` table of one history database."""

    def __init__(self, history: Database) -> None:
        self._history = history
        self._generation = 0
        self._totals: dict[tuple[object, ...], tuple[Version, int]] = {}
        self._links: OrderedDict[tuple[object, ...], _ScopeLinks] = OrderedDict()
        with history.transaction() as conn:
            for statement in _SCHEMA:
                conn.execute(statement)

    def upsert(self, conn: sqlite3.Connection, docs: Iterable[KeywordDoc]) -> None:
        """Inside a transaction: link each doc to its entities, replacing older links."""
        docs = list(docs)
        self.delete(conn, [d.memory_id for d in docs])
        conn.executemany(
            "INSERT OR IGNORE INTO entity_links(memory_id, entity, user_id, agent_id, run_id, "
            "status) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (d.memory_id, entity, d.user_id, d.agent_id, d.run_id, d.status)
                for d in docs
                for entity in extract_entities(d.text)
            ],
        )

    def delete(self, conn: sqlite3.Connection, memory_ids: Sequence[str]) -> None:
        """Inside a transaction: drop every link of ``memory_ids``."""
        self._generation += 1
        conn.executemany("DELETE FROM entity_links WHERE memory_id = ?", [(i,) for i in memory_ids])

    def delete_scope(self, conn: sqlite3.Connection, scope: ScopeKeys) -> None:
        """Inside a transaction: drop every link of ``scope``."""
        self._generation += 1
        keys = scope.as_dict()
        clauses = " AND ".join(f"{k} = ?" for k in keys)
        conn.execute(f"DELETE FROM entity_links WHERE {clauses}", list(keys.values()))

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
        with self._history.snapshot() as conn:
            links = self._scope_links(conn, where, base)
            if links is not None:
                found = {e: links.by_entity[e] for e in entities if e in links.by_entity}
                df = {e: len(ids) for e, ids in found.items()}
                total = links.total
                rows = [(i, e) for i in memory_ids for e, ids in found.items() if i in ids]
            else:
                df, total, rows = self._match_sql(conn, entities, memory_ids, where, base)
        if not df:
            return EntityMatches({}, {})
        norm = math.log(1 + max(total, 1))
        weight = {e: math.log(1 + max(total, 1) / n) / norm for e, n in df.items()}
        linked: dict[str, list[str]] = {}
        for memory_id, entity in rows:
            linked.setdefault(memory_id, []).append(entity)
        return EntityMatches(weight, {k: tuple(v) for k, v in linked.items()})

    def _scope_links(
        self, conn: sqlite3.Connection, where: str, params: Sequence[object]
    ) -> _ScopeLinks | None:
        """The scope's links by entity, cached until the next write (of this process or
        another connection); ``None`` for a scope too large to cache."""
        key = (where, *params)
        version = (self._generation, data_version(conn))
        cached = self._links.get(key)
        if cached is not None and cached.version == version:
            self._links.move_to_end(key)
            return cached
        self._links.pop(key, None)
        total = self._total(conn, where, params)
        if total > CACHE_MAX_DOCS:
            return None
        by_entity: dict[str, set[str]] = {}
        for memory_id, entity in conn.execute(
            f"SELECT memory_id, entity FROM entity_links WHERE {where}", params
        ):
            by_entity.setdefault(entity, set()).add(memory_id)
        entry = _ScopeLinks(version, total, by_entity)
        self._links[key] = entry
        while sum(e.total for e in self._links.values()) > CACHE_TOTAL_DOCS:
            self._links.popitem(last=False)
        return entry

    def _match_sql(
        self,
        conn: sqlite3.Connection,
        entities: Sequence[str],
        memory_ids: Sequence[str],
        where: str,
        base: Sequence[object],
    ) -> tuple[dict[str, int], int, list[tuple[str, str]]]:
        """(df of each entity found, memories with entities, (memory id, entity) links of
        ``memory_ids``) read from the table, for scopes too large to cache."""
        df = dict(
            conn.execute(
                f"SELECT entity, COUNT(*) FROM entity_links WHERE {_in('entity', entities)} "
                f"AND {where} GROUP BY entity",
                [*entities, *base],
            ).fetchall()
        )
        if not df:
            return {}, 0, []
        total = self._total(conn, where, base)
        rows = conn.execute(
            f"SELECT memory_id, entity FROM entity_links WHERE {_in('memory_id', memory_ids)} "
            f"AND {_in('entity', list(df))}",
            [*memory_ids, *df],
        ).fetchall()
        return df, total, rows

    def _total(self, conn: sqlite3.Connection, where: str, params: Sequence[object]) -> int:
        """Memories with entities matching ``where``, cached until the next write (a write
        that rolls back only costs a recount)."""
        key = (where, *params)
        cached = self._totals.get(key)
        version = (self._generation, data_version(conn))
        if cached is not None and cached[0] == version:
            return cached[1]
        total = conn.execute(
            f"SELECT COUNT(DISTINCT memory_id) FROM entity_links WHERE {where}", params
        ).fetchone()[0]
        if len(self._totals) > 1024:
            self._totals.clear()
        self._totals[key] = (version, int(total))
        return int(total)

    def reset(self) -> None:
        """Remove every link."""
        self._generation += 1
        with self._history.transaction() as conn:
            conn.execute("DELETE FROM entity_links")


def _in(column: str, values: Sequence[object]) -> str:
    return f"{column} IN ({', '.join('?' * len(values))})"
