"""Per-scope BM25 postings kept in memory, so a search does not re-read the matching texts.

:class:`PostingsCache` holds, for recently searched scopes, every token's postings
(memory id and the BM25 term-frequency factor, document length already folded in) and
the scope's IDF inputs. A cached entry is tagged with a version: the keyword index's write
generation, bumped by every index write inside the history's commit transaction, and
SQLite's ``PRAGMA data_version``, which changes when another connection commits to the
database file. A search whose version differs rebuilds the entry, so the cache never
serves a state older than the last commit.

Okapi BM25 with k1 = 1.2, b = 0.75: ``idf(t) = log(1 + (N - n + 0.5) / (n + 0.5))`` and
``tf(f, len) = f (k1 + 1) / (f + k1 (1 - b + b len / avg_len))``.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

K1, B = 1.2, 0.75
CACHE_MAX_DOCS = 20_000
"""Scopes with more documents than this are scored from FTS5 matches per query instead."""
CACHE_TOTAL_DOCS = 200_000
"""Documents held over all cached scopes, at most (least recently searched dropped first)."""

Version = tuple[int, int]
ScopeStats = Callable[[sqlite3.Connection, str, list[object]], tuple[int, float]]


def bm25_idf(docs: int, matching: int) -> float:
    """BM25's IDF of a token found in ``matching`` of ``docs`` documents."""
    return math.log(1 + (docs - matching + 0.5) / (matching + 0.5))


def bm25_tf(frequency: int, length: int, avg_length: float) -> float:
    """BM25's term-frequency factor of a token seen ``frequency`` times in a document."""
    return frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * length / avg_length))


def bm25_ceiling(docs: int, matching: list[int]) -> float:
    """The largest BM25 score a document can reach for a query whose tokens are found in
    ``matching`` documents each (0 for a token no document has): every token at the
    saturated term frequency, ``sum(idf) * (k1 + 1)``. A score divided by it is in [0, 1]
    and says how much of the query's weight a document matches, whatever the pool."""
    return sum(bm25_idf(docs, n) for n in matching) * (K1 + 1)


def data_version(conn: sqlite3.Connection) -> int:
    """SQLite's ``data_version``: changes when another connection commits to the file."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


@dataclass(frozen=True)
class ScopePostings:
    """One scope's documents as BM25 reads them (see the module docstring)."""

    version: Version
    docs: int
    postings: dict[str, tuple[list[str], list[float]]]

    def matching(self, tokens: list[str]) -> list[int]:
        """How many documents contain each of ``tokens``."""
        return [len(self.postings[t][0]) if t in self.postings else 0 for t in tokens]

    def score(self, tokens: list[str]) -> list[tuple[str, float]]:
        """(memory id, BM25 score) of every document containing one of ``tokens``."""
        scores: dict[str, float] = {}
        get = scores.get
        for token in tokens:
            found = self.postings.get(token)
            if found is None:
                continue
            ids, factors = found
            idf = bm25_idf(self.docs, len(ids))
            for memory_id, factor in zip(ids, factors, strict=True):
                scores[memory_id] = get(memory_id, 0.0) + idf * factor
        return list(scores.items())


class PostingsCache:
    """Recently searched scopes' postings, rebuilt when their version changes."""

    def __init__(self, scope_stats: ScopeStats) -> None:
        self._scope_stats = scope_stats
        self._entries: OrderedDict[tuple[object, ...], ScopePostings] = OrderedDict()

    def get(
        self, conn: sqlite3.Connection, where: str, params: list[object], generation: int
    ) -> ScopePostings | None:
        """The postings of the documents matching ``where`` (current as of the last
        commit), or ``None`` when the scope is too large to cache."""
        key = (where, *params)
        version = (generation, data_version(conn))
        entry = self._entries.get(key)
        if entry is not None and entry.version == version:
            self._entries.move_to_end(key)
            return entry
        self._entries.pop(key, None)
        docs, avg_length = self._scope_stats(conn, where, params)
        if docs > CACHE_MAX_DOCS:
            return None
        entry = self._build(conn, where, params, version, avg_length)
        self._entries[key] = entry
        while sum(e.docs for e in self._entries.values()) > CACHE_TOTAL_DOCS:
            self._entries.popitem(last=False)
        return entry

    @staticmethod
    def _build(
        conn: sqlite3.Connection,
        where: str,
        params: list[object],
        version: Version,
        avg_length: float,
    ) -> ScopePostings:
        rows = conn.execute(  # through keyword_docs' scope index, never a scan of the FTS
            "SELECT memory_id, tokens FROM keyword_fts "
            f"WHERE rowid IN (SELECT rowid FROM keyword_docs WHERE {where})",
            params,
        )
        postings: dict[str, tuple[list[str], list[float]]] = {}
        docs = 0
        for memory_id, text_tokens in rows:
            docs += 1
            words = text_tokens.split()
            for token, frequency in Counter(words).items():
                entry = postings.get(token)
                if entry is None:
                    entry = postings[token] = ([], [])
                entry[0].append(memory_id)
                entry[1].append(bm25_tf(frequency, len(words), avg_length))
        return ScopePostings(version, docs, postings)
