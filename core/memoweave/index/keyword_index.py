"""The core's keyword index: BM25 over memory texts, in SQLite beside the history.

Two tables (:mod:`memoweave.index.keyword_tables`): ``keyword_fts`` (FTS5) finds the
memories that contain a query token; ``keyword_docs`` has one row per memory (scope ids,
status, token count). Scores are Okapi BM25 (k1 = 1.2, b = 0.75) computed with the
statistics of the searched scope only, so one user's memories never change the ranking
of another's (FTS5's own ``bm25()`` would use the whole table). Each scope's document
count and total length, and each token's document frequency in a large scope, are kept
in tables by every write (:mod:`memoweave.index.scope_stats`), so no search counts them.
A searched scope's statistics and postings are kept in memory
(:mod:`memoweave.index.keyword_postings`): this process's writes change them in place, a
write of another connection to the scope makes the next search re-read them
(:mod:`memoweave.index.scope_cache`). Scopes too large to hold are ranked from their FTS5
postings in SQLite with MaxScore's early stop (:mod:`memoweave.index.keyword_topk`);
scopes small enough to read whole at every search
(:data:`.keyword_postings.SCANNED_MAX_DOCS`) are never cached.

Rows are written inside the history's commit transaction (an ``on_commit`` hook of the
write plan), so the index and the history always agree; the vector store agrees through
the write journal. Text is tokenised in Python (:mod:`memoweave.index.tokenize`) and
stored as space-joined tokens, so FTS5's ``unicode61`` tokenizer only splits on spaces.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from memoweave.index import keyword_postings, keyword_topk, lemma_forms
from memoweave.index.contracts import Database, ScopeKeys
from memoweave.index.keyword_postings import (
    CACHE_TOTAL_DOCS,
    ScopeDocs,
    bm25_ceiling,
    bm25_idf,
)
from memoweave.index.keyword_tables import FTS_ROWIDS, link_rowids, scope_groups
from memoweave.index.keyword_tables import SCHEMA as KEYWORD_SCHEMA
from memoweave.index.scope_cache import SCHEMA as SCOPE_CACHE_SCHEMA
from memoweave.index.scope_cache import (
    ScopeCache,
    ScopeId,
    Version,
    chunks,
    scope_condition,
    scope_id,
    scope_keys,
)
from memoweave.index.scope_stats import SCHEMA as STATS_SCHEMA
from memoweave.index.scope_stats import Counted, ScopeStats, TermStats, term_totals
from memoweave.index.tokenize import lemma_words, lemmas, tokenize

MAX_QUERY_TOKENS = 64


@dataclass(frozen=True)
class KeywordScores:
    """The memories of a scope that best match a query by BM25.

    ``hits``: the best (memory id, score > 0), best first (ties by id), at most the limit
    asked; ``ceiling``: the score a memory matching every query token at saturation would
    get (:func:`.keyword_postings.bm25_ceiling`), so ``score / ceiling`` is in [0, 1] and
    comparable across queries and pools; ``score_of`` gives the BM25 (> 0) of any memory
    ids of the scope, ranked or not (those with no query token left out).
    """

    hits: list[tuple[str, float]]
    ceiling: float
    score_of: Callable[[Sequence[str]], dict[str, float]]


def _no_scores(memory_ids: Sequence[str]) -> dict[str, float]:
    return {}


@dataclass(frozen=True)
class KeywordDoc:
    """One memory as the index sees it."""

    memory_id: str
    text: str
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    status: str

    @property
    def scope(self) -> ScopeId:
        """The memory's (user_id, agent_id, run_id)."""
        return (self.user_id, self.agent_id, self.run_id)


class KeywordIndex:
    """BM25 keyword search over memory texts, scoped like the vector store."""

    def __init__(self, history: Database) -> None:
        self._history = history
        self._cache: ScopeCache[ScopeDocs] = ScopeCache("keyword", CACHE_TOTAL_DOCS)
        self._stats = ScopeStats("keyword", self._scope_terms)
        with history.transaction() as conn:
            for statement in (*SCOPE_CACHE_SCHEMA, *STATS_SCHEMA, *KEYWORD_SCHEMA):
                conn.execute(statement)
            if link_rowids(conn):
                self._cache.touch_all(conn)
            self._rows = keyword_topk.fts_rows(conn)
            self._stats.open(conn, scope_groups)

    def upsert(self, conn: sqlite3.Connection, docs: Iterable[KeywordDoc]) -> None:
        """Inside a transaction: index ``docs``, replacing earlier rows of the same ids."""
        docs = list(docs)
        old = self._remove(conn, [d.memory_id for d in docs])
        words = {w for d in docs for w in lemma_words(d.text)}
        lemmatizer, known = lemmas(words)
        known.update(lemmas(set(known.values()) - words)[1])  # queries often use the lemma
        lemma_forms.with_forms(conn, lemmatizer, known)  # so a query need not load it
        rows = [(d, tokenize(d.text, known)) for d in docs]
        conn.executemany(
            "INSERT OR IGNORE INTO keyword_lemmas(lemmatizer, word, lemma) VALUES (?, ?, ?)",
            [(lemmatizer, word, lemma) for word, lemma in known.items()],
        )
        conn.executemany(
            "INSERT INTO keyword_docs(memory_id, user_id, agent_id, run_id, status, length) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(d.memory_id, d.user_id, d.agent_id, d.run_id, d.status, len(t)) for d, t in rows],
        )
        conn.executemany(
            "INSERT INTO keyword_fts(rowid, memory_id, user_id, agent_id, run_id, status, tokens) "
            f"VALUES (({FTS_ROWIDS}memory_id = ?), ?, ?, ?, ?, ?, ?)",
            [
                (d.memory_id, d.memory_id, d.user_id, d.agent_id, d.run_id, d.status, " ".join(t))
                for d, t in rows
            ],
        )
        self._cache.touch(conn, [*(o.scope for o, _ in old), *(d.scope for d in docs)])
        self._stats.apply(conn, _counted(old), _counted(rows))
        self._apply(old, rows)

    def delete(self, conn: sqlite3.Connection, memory_ids: Sequence[str]) -> None:
        """Inside a transaction: remove ``memory_ids`` from the index."""
        old = self._remove(conn, memory_ids)
        self._cache.touch(conn, [o.scope for o, _ in old])
        self._stats.apply(conn, _counted(old), [])
        self._apply(old, [])

    def _remove(
        self, conn: sqlite3.Connection, memory_ids: Sequence[str]
    ) -> list[tuple[KeywordDoc, list[str]]]:
        """Delete the rows of ``memory_ids``; the removed memories and their tokens."""
        old = []
        for chunk in chunks(list(dict.fromkeys(memory_ids))):
            old += conn.execute(
                "SELECT memory_id, user_id, agent_id, run_id, status, "
                "(SELECT tokens FROM keyword_fts WHERE rowid = d.rowid) FROM keyword_docs AS d "
                f"WHERE memory_id IN ({', '.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
        ids = [(i,) for i in memory_ids]
        conn.executemany(f"DELETE FROM keyword_fts WHERE rowid IN ({FTS_ROWIDS}memory_id = ?)", ids)
        conn.executemany("DELETE FROM keyword_docs WHERE memory_id = ?", ids)
        return [(KeywordDoc(r[0], "", r[1], r[2], r[3], r[4]), (r[5] or "").split()) for r in old]

    def _apply(
        self,
        removed: list[tuple[KeywordDoc, list[str]]],
        added: list[tuple[KeywordDoc, list[str]]],
    ) -> None:
        """Apply a write's removed and added documents to the current cached entries."""
        for doc, tokens in removed:
            for entry in self._cache.holding(doc.scope, doc.status):
                entry.remove(doc.memory_id, tokens)
        for doc, tokens in added:
            for entry in self._cache.holding(doc.scope, doc.status):
                entry.add(doc.memory_id, tokens)

    def delete_scope(self, conn: sqlite3.Connection, scope: ScopeKeys) -> None:
        """Inside a transaction: remove every row of ``scope``."""
        clauses, params = scope_condition(scope.as_dict())
        removed = list(self._counted_rows(conn, clauses, params))
        conn.execute(f"DELETE FROM keyword_fts WHERE rowid IN ({FTS_ROWIDS}{clauses})", params)
        conn.execute(f"DELETE FROM keyword_docs WHERE {clauses}", params)
        self._stats.apply(conn, removed, [])
        self._cache.touch_all(conn)

    def indexed_ids(self) -> set[str]:
        """Every memory id the index holds (for ``memoweave doctor``)."""
        with self._history.snapshot() as conn:
            return {row[0] for row in conn.execute("SELECT memory_id FROM keyword_docs")}

    def reset(self) -> None:
        """Remove every row."""
        with self._history.transaction() as conn:
            conn.execute("DELETE FROM keyword_fts")
            conn.execute("DELETE FROM keyword_docs")
            conn.execute("DELETE FROM keyword_lemmas")
            self._stats.clear(conn)
            self._cache.touch_all(conn)

    def search(
        self, text: str, scope: ScopeKeys, *, top_k: int, statuses: Sequence[str]
    ) -> list[tuple[str, float]]:
        """Memory ids of ``scope`` ranked by BM25 for ``text`` (score > 0, higher is better)."""
        if top_k <= 0:
            return []
        return self.scores(text, scope, statuses=statuses, limit=top_k).hits

    def scores(
        self, text: str, scope: ScopeKeys, *, statuses: Sequence[str], limit: int
    ) -> KeywordScores:
        """The ``limit`` memories of ``scope`` with the best BM25 for ``text``, the query's
        ceiling and the scorer of other ids (see :class:`KeywordScores`)."""
        if not statuses or limit <= 0:
            return KeywordScores([], 0.0, _no_scores)
        tokens = list(dict.fromkeys(tokenize(text, self._known_lemmas(text))))[:MAX_QUERY_TOKENS]
        if not tokens:
            return KeywordScores([], 0.0, _no_scores)
        keys = scope.as_dict()
        where, params = _scope_where(keys, statuses)
        key = (scope_id(keys), tuple(sorted(set(statuses))))
        with self._history.snapshot() as conn:
            counts = None if key in self._cache else self._stats.counts(conn, *key)
            if counts is not None and counts[0] <= keyword_postings.SCANNED_MAX_DOCS:
                # a small scope, never held: scored from its rows
                rows = _scope_rows(conn, where, params, self._rows).fetchall()
                docs, scored, matching = keyword_postings.score_rows(rows, tokens)
            else:
                entry = self._cache.get(
                    conn,
                    *key,
                    lambda version, hold: self._build(
                        conn,
                        where,
                        params,
                        version,
                        hold,
                        counts or self._stats.counts(conn, *key),
                        self._rows,
                    ),
                )
                if entry.postings is None:
                    return self._score_matches(conn, tokens, key, keys, entry, limit)
                docs, scored, matching = entry.docs, entry.score(tokens), entry.matching(tokens)
        ceiling = bm25_ceiling(docs, matching)
        scored = {i: s for i, s in scored.items() if s > 0}
        hits = heapq.nsmallest(limit, scored.items(), key=lambda pair: (-pair[1], pair[0]))
        return KeywordScores(hits, ceiling, lambda ids: {i: scored[i] for i in ids if i in scored})

    def _scope_terms(
        self, conn: sqlite3.Connection, scope: ScopeId
    ) -> Iterator[tuple[str, str, TermStats]]:
        """(token, status, statistics) of every token of ``scope``'s documents."""
        return term_totals(self._counted_rows(conn, *scope_condition(scope_keys(scope))))

    def _counted_rows(
        self, conn: sqlite3.Connection, where: str, params: Sequence[object]
    ) -> Iterator[Counted]:
        """The documents ``where`` selects in ``keyword_docs``, as statistics count them."""
        for *ids, status, text in conn.execute(
            f"SELECT user_id, agent_id, run_id, status, tokens FROM {self._rows} "
            f"WHERE doc IN (SELECT rowid FROM keyword_docs WHERE {where})",
            params,
        ):
            tokens = text.split()
            yield Counted((ids[0], ids[1], ids[2]), status, len(tokens), tokens)

    def _known_lemmas(self, text: str) -> dict[str, str]:
        """The lemmas of ``text``'s words that the index has seen (by this lemmatizer),
        or a stand-in scoring the same (:mod:`.lemma_forms`)."""
        words = sorted(lemma_words(text))
        if not words:
            return {}
        with self._history.snapshot() as conn:
            return lemma_forms.known_lemmas(conn, words, 4 * MAX_QUERY_TOKENS)

    @staticmethod
    def _build(
        conn: sqlite3.Connection,
        where: str,
        params: list[object],
        version: Version,
        hold: bool,
        counts: tuple[int, int],
        fts_rows: str,
    ) -> ScopeDocs:
        """The scope's entry read from the tables, of ``counts`` (documents, total
        length; postings only if small enough, and if ``hold`` or small enough to hold
        from a first search)."""
        count, total = counts
        rows = None
        if count <= keyword_postings.CACHE_MAX_DOCS and (
            hold or count <= keyword_postings.HELD_FROM_FIRST_SEARCH
        ):
            rows = _scope_rows(conn, where, params, fts_rows)
        return ScopeDocs.build(version, int(count), int(total), rows)

    def _score_matches(
        self,
        conn: sqlite3.Connection,
        tokens: list[str],
        key: tuple[ScopeId, tuple[str, ...]],
        keys: dict[str, str],
        entry: ScopeDocs,
        limit: int,
    ) -> KeywordScores:
        """The best ``limit`` of the scope's memories holding one of ``tokens`` (the path
        of scopes too large to hold): MaxScore over the tokens' postings in SQLite
        (:mod:`.keyword_topk`). A token's document frequency, a bound on its largest
        frequency and its shortest memory are read once per entry (the entry keeps them
        current), from the scope's statistics (:mod:`.scope_stats`) if it keeps them."""
        scope, statuses = key
        where, params = _scope_where(keys, statuses, unindexed=True)
        unknown = [t for t in tokens if t not in entry.df]
        kept = self._stats.terms(conn, scope, statuses, unknown) if unknown else None
        if kept is not None:  # (df, instances, shortest): most in one memory as below
            entry.remember_df(
                {t: (df, n - df + 1 if df else 0, k) for t, (df, n, k) in kept.items()}
            )
        elif unknown:  # per token: its instances, the memories holding it, the shortest one
            counted = conn.execute(
                "SELECT v.term, COUNT(*), COUNT(DISTINCT v.doc), MIN(d.length) "
                "FROM keyword_vocab AS v JOIN keyword_docs AS d ON d.rowid = v.doc "
                f"WHERE v.term IN ({', '.join('?' * len(unknown))}) AND {where} GROUP BY v.term",
                [*unknown, *params],
            ).fetchall()
            # a memory holding a token k times leaves instances - k for the df - 1 others
            found = {t: (df, seen - df + 1, shortest) for t, seen, df, shortest in counted}
            entry.remember_df({t: found.get(t, (0, 0, 0)) for t in unknown})
        docs, avg_length = entry.docs, entry.avg_length
        ceiling = bm25_ceiling(docs, [entry.df[t] for t in tokens])
        idf = {t: bm25_idf(docs, entry.df[t]) for t in tokens if entry.df[t]}
        if not idf:
            return KeywordScores([], ceiling, _no_scores)
        bounds = {t: entry.bound(t, w) for t, w in idf.items()}
        matches = {t: entry.df[t] for t in idf}
        hits = keyword_topk.top_k(
            conn, idf, bounds, matches, where, params, avg_length, limit, self._rows
        )
        ranked = dict(hits)

        def score_of(memory_ids: Sequence[str]) -> dict[str, float]:
            rest = [i for i in dict.fromkeys(memory_ids) if i not in ranked]
            scores = {i: ranked[i] for i in memory_ids if i in ranked}
            if rest:
                scores.update(self._score_docs(rest, where, params, idf, avg_length))
            return scores

        return KeywordScores(hits, ceiling, score_of)

    def _score_docs(
        self,
        memory_ids: list[str],
        where: str,
        params: list[object],
        idf: dict[str, float],
        avg_length: float,
    ) -> dict[str, float]:
        """BM25 of a few memories of the scope, from their stored tokens, with the IDF and
        average length of the query they were not ranked for (``where`` must not use the
        scope indexes: the memories are found by id)."""
        scores: dict[str, float] = {}
        with self._history.snapshot() as conn:
            for chunk in chunks(memory_ids):
                scores.update(
                    keyword_topk.scores_of(conn, chunk, idf, where, params, avg_length, self._rows)
                )
        return scores


def _scope_rows(
    conn: sqlite3.Connection, where: str, params: list[object], fts_rows: str
) -> sqlite3.Cursor:
    """The (memory id, tokens) rows of the scope ``where`` selects, read from ``fts_rows``
    (:func:`.keyword_topk.fts_rows`)."""
    return conn.execute(  # through keyword_docs' scope index, never a scan of the FTS
        f"SELECT memory_id, tokens FROM {fts_rows} "
        f"WHERE doc IN (SELECT rowid FROM keyword_docs WHERE {where})",
        params,
    )


def _counted(docs: list[tuple[KeywordDoc, list[str]]]) -> list[Counted]:
    return [Counted(d.scope, d.status, len(tokens), tokens) for d, tokens in docs]


def _scope_where(
    keys: dict[str, str], statuses: Sequence[str], *, unindexed: bool = False
) -> tuple[str, list[object]]:
    """The SQL condition (and its parameters) on ``keyword_docs`` of a scope's rows of
    ``statuses``; ``unindexed`` keeps the planner off the scope indexes (for rows found
    by rowid or id, which the scope index would make a scan of the whole scope)."""
    column = "+{}".format if unindexed else "{}".format
    where = " AND ".join(
        [
            *(f"{column(k)} = ?" for k in keys),
            f"{column('status')} IN ({', '.join('?' * len(statuses))})",
        ]
    )
    return where, [*keys.values(), *statuses]
