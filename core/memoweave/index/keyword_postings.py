"""Per-scope BM25 inputs kept in memory, so a search does not re-read the matching texts.

A :class:`ScopeDocs` is one scope's document count and total length and, for scopes of
at most :data:`CACHE_MAX_DOCS` documents, every token's postings as raw counts (memory id
-> frequency) beside each document's length. BM25's term-frequency factor is computed at
query time from those counts and the current average length, so adding or removing a
document changes only its own postings (O(its text)) and scores stay exactly those of a
rebuild. Entries live in a :class:`memoweave.index.scope_cache.ScopeCache`, which says
when one is current.

Okapi BM25 with k1 = 1.2, b = 0.75: ``idf(t) = log(1 + (N - n + 0.5) / (n + 0.5))`` and
``tf(f, len) = f (k1 + 1) / (f + k1 (1 - b + b len / avg_len))``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from memoweave.index.scope_cache import STALE, Version

K1, B = 1.2, 0.75
CACHE_MAX_DOCS = 20_000
"""Scopes with more documents than this are scored from FTS5 matches per query instead."""
HELD_FROM_FIRST_SEARCH = 2_000
"""Scopes of at most this many documents are held from a process's first search of them
(reading them costs less than ranking from the tables, whose postings span every scope);
larger ones are ranked in SQLite at the first search and held from the next."""
SCANNED_MAX_DOCS = 256
"""Scopes of at most this many documents are never held: each search reads their rows
(one range of the scope index) and scores them (:func:`score_rows`). Holding one costs
about 1.3 KiB of postings per document and its build more than a scan, and a deployment
of many small scopes (one per user) searches most of them once in a while: held, ten
thousand of them would fill the budget and be evicted before their next search. The
entity index reads a scope whole under the same bound, in memories with entities."""
CACHE_TOTAL_DOCS = 200_000
"""Documents held over all cached scopes, at most (least recently searched dropped first)."""
MAX_KNOWN_DF = 100_000
"""Document frequencies a statistics-only entry remembers, at most."""


def bm25_idf(docs: int, matching: int) -> float:
    """BM25's IDF of a token found in ``matching`` of ``docs`` documents."""
    return math.log(1 + (docs - matching + 0.5) / (matching + 0.5))


def length_norm(length: int, avg_length: float) -> float:
    """BM25's document-length term ``k1 (1 - b + b len / avg_len)``."""
    return K1 * (1 - B + B * length / avg_length)


def bm25_tf(frequency: int, length: int, avg_length: float) -> float:
    """BM25's term-frequency factor of a token seen ``frequency`` times in a document."""
    return frequency * (K1 + 1) / (frequency + length_norm(length, avg_length))


def bm25_ceiling(docs: int, matching: list[int]) -> float:
    """The largest BM25 score a document can reach for a query whose tokens are found in
    ``matching`` documents each (0 for a token no document has): every token at the
    saturated term frequency, ``sum(idf) * (k1 + 1)``. A score divided by it is in [0, 1]
    and says how much of the query's weight a document matches, whatever the pool."""
    return sum(bm25_idf(docs, n) for n in matching) * (K1 + 1)


def bm25_bound(idf: float, max_frequency: int, min_length: int, avg_length: float) -> float:
    """The most a token of this IDF can add to a document's score, when no document holds
    it more than ``max_frequency`` times and none holding it is shorter than
    ``min_length`` (the term-frequency factor grows with the frequency and shrinks with
    the length)."""
    return idf * bm25_tf(max_frequency, min_length, avg_length)


def average_length(docs: int, total_length: int) -> float:
    """The average document length BM25 uses (at least 1)."""
    return max(1.0, total_length / docs) if docs else 1.0


def score_rows(
    rows: Iterable[tuple[str, str]], tokens: list[str]
) -> tuple[int, dict[str, float], list[int]]:
    """A scope read whole: its document count, the BM25 of every (memory id,
    space-joined tokens) row holding one of ``tokens`` (distinct), and how many documents
    hold each token; the same floats as :meth:`ScopeDocs.score` of the scope held (the
    same operations in the same order)."""
    wanted = set(tokens)
    docs = total_length = 0
    found: list[tuple[str, int, list[int]]] = []
    for memory_id, text in rows:
        words = text.split()
        docs += 1
        total_length += len(words)
        if not wanted.isdisjoint(words):
            found.append((memory_id, len(words), [words.count(t) for t in tokens]))
    matching = [sum(1 for *_, counts in found if counts[i]) for i in range(len(tokens))]
    avg = average_length(docs, total_length)
    idf = [bm25_idf(docs, n) for n in matching]
    scores: dict[str, float] = {}
    for memory_id, length, counts in found:
        norm = length_norm(length, avg)
        score = 0.0
        for weight, frequency in zip(idf, counts, strict=True):
            if frequency:
                score += weight * (frequency * (K1 + 1) / (frequency + norm))
        scores[memory_id] = score
    return docs, scores, matching


@dataclass
class ScopeDocs:
    """One scope's documents as BM25 reads them (see the module docstring);
    ``postings`` and ``lengths`` are ``None`` for a scope too large to hold, whose ``df``
    remembers the document frequency of the tokens searches asked for and ``extremes``
    bounds of each one's (most times one document holds it, shortest document holding
    it), kept by writes (a removal leaves the extremes as they were: still bounds)."""

    version: Version
    docs: int
    total_length: int
    postings: dict[str, dict[str, int]] | None
    lengths: dict[str, int] | None
    df: dict[str, int] = field(default_factory=dict)
    extremes: dict[str, tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def build(
        cls, version: Version, docs: int, total_length: int, rows: Iterable[tuple[str, str]] | None
    ) -> ScopeDocs:
        """An entry from the scope's statistics and, unless ``None``, its (memory id,
        space-joined tokens) rows."""
        if rows is None:
            return cls(version, docs, total_length, None, None)
        entry = cls(version, 0, 0, {}, {})
        for memory_id, tokens in rows:
            entry.add(memory_id, tokens.split())
        return entry

    @property
    def held(self) -> int:
        """Documents whose postings are held (0 for a statistics-only entry)."""
        return self.docs if self.postings is not None else 0

    @property
    def deferred(self) -> bool:
        """Statistics only, though small enough to hold (a process's first search)."""
        return self.postings is None and self.docs <= CACHE_MAX_DOCS

    @property
    def avg_length(self) -> float:
        """The scope's average document length."""
        return average_length(self.docs, self.total_length)

    def add(self, memory_id: str, tokens: list[str]) -> None:
        """Count a new document with these tokens (postings dropped past the cap)."""
        self.docs += 1
        self.total_length += len(tokens)
        if self.postings is None or self.lengths is None:
            for token, frequency in Counter(tokens).items():
                if token in self.df:
                    self.df[token] += 1
                    most, shortest = self.extremes[token]
                    self.extremes[token] = (max(most, frequency), min(shortest, len(tokens)))
            return
        if self.docs > CACHE_MAX_DOCS:
            self.postings = self.lengths = None
            return
        self.lengths[memory_id] = len(tokens)
        for token, frequency in Counter(tokens).items():
            found = self.postings.get(token)
            if found is None:
                self.postings[token] = {memory_id: frequency}
            else:
                found[memory_id] = frequency

    def remove(self, memory_id: str, tokens: list[str]) -> None:
        """Forget a document counted with these tokens."""
        self.docs -= 1
        self.total_length -= len(tokens)
        if self.postings is None or self.lengths is None:
            for token in set(tokens):
                if token in self.df:
                    self.df[token] -= 1
            if self.docs <= CACHE_MAX_DOCS:  # small enough to hold again: as a rebuild would
                self.version = STALE
            return
        del self.lengths[memory_id]
        for token in set(tokens):
            found = self.postings[token]
            del found[memory_id]
            if not found:
                del self.postings[token]

    def remember_df(self, counted: dict[str, tuple[int, int, int]]) -> None:
        """Remember each token's (document frequency, at least the most times one
        document holds it, at most the length of the shortest document holding it) read
        from the tables (as of this entry's version)."""
        if len(self.df) + len(counted) > MAX_KNOWN_DF:
            self.df.clear()
            self.extremes.clear()
        for token, (df, most, shortest) in counted.items():
            self.df[token], self.extremes[token] = df, (most, shortest)

    def bound(self, token: str, idf: float) -> float:
        """The most ``token`` (of this IDF, remembered) adds to a document's score
        (:func:`bm25_bound` at its extremes)."""
        most, shortest = self.extremes[token]
        return bm25_bound(idf, most, shortest, self.avg_length)

    def matching(self, tokens: list[str]) -> list[int]:
        """How many documents contain each of ``tokens``."""
        assert self.postings is not None
        return [len(self.postings.get(t, ())) for t in tokens]

    def score(self, tokens: list[str]) -> dict[str, float]:
        """BM25 score of every document containing one of ``tokens``."""
        assert self.postings is not None and self.lengths is not None
        avg, lengths = self.avg_length, self.lengths
        norms: dict[int, float] = {}
        scores: dict[str, float] = {}
        get = scores.get
        for token in tokens:
            found = self.postings.get(token)
            if found is None:
                continue
            idf = bm25_idf(self.docs, len(found))
            for memory_id, frequency in found.items():
                length = lengths[memory_id]
                norm = norms.get(length)
                if norm is None:
                    norm = norms[length] = length_norm(length, avg)
                tf = frequency * (K1 + 1) / (frequency + norm)  # bm25_tf, inlined
                scores[memory_id] = get(memory_id, 0.0) + idf * tf
        return scores
