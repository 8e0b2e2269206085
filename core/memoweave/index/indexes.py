"""The indexes the core keeps beside the history: keyword (BM25) and entity links.

:class:`SideIndexes` is what the write path talks to. Every method that takes a
connection runs inside the history's commit transaction (an ``on_commit`` hook of the
write plan, see :mod:`memoweave.memory.transaction`), so both indexes change together
with the history or not at all.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memoweave.index.contracts import Database, ScopeKeys
from memoweave.index.entity_index import EntityIndex
from memoweave.index.keyword_index import KeywordDoc, KeywordIndex
from memoweave.index.tokenize import preload


@dataclass
class SideIndexes:
    """The keyword index (``None`` when keyword search is the store's) and entity links."""

    keyword: KeywordIndex | None
    entities: EntityIndex

    @classmethod
    def open(cls, history: Database, *, keyword: bool) -> SideIndexes:
        """Create the tables if needed; ``keyword=False`` skips the keyword index."""
        return cls(KeywordIndex(history) if keyword else None, EntityIndex(history))

    def will_write(self) -> None:
        """Start loading what indexing needs (the lemma dictionary) on another thread, so
        a write's tokenisation rarely waits for it (searches need it only for words never
        indexed; a command that only searches never loads it)."""
        if self.keyword is not None:
            preload()

    def upsert(self, conn: sqlite3.Connection, docs: Iterable[KeywordDoc]) -> None:
        """Inside a transaction: (re)index ``docs``."""
        docs = list(docs)
        if self.keyword is not None:
            self.keyword.upsert(conn, docs)
        self.entities.upsert(conn, docs)

    def delete(self, conn: sqlite3.Connection, memory_ids: Sequence[str]) -> None:
        """Inside a transaction: forget ``memory_ids``."""
        if self.keyword is not None:
            self.keyword.delete(conn, memory_ids)
        self.entities.delete(conn, memory_ids)

    def delete_scope(self, conn: sqlite3.Connection, scope: ScopeKeys) -> None:
        """Inside a transaction: forget every memory of ``scope``."""
        if self.keyword is not None:
            self.keyword.delete_scope(conn, scope)
        self.entities.delete_scope(conn, scope)

    def reset(self) -> None:
        """Forget everything."""
        if self.keyword is not None:
            self.keyword.reset()
        self.entities.reset()
