"""Top-k BM25 of a scope too large to hold in memory: MaxScore over SQLite's postings.

The scope's statistics-only entry (:class:`.keyword_postings.ScopeDocs`) knows, for each
query token, how many of the scope's memories hold it and the most times one memory holds
it; with the scope's shortest length that bounds what the token can add to a score
(:func:`.keyword_postings.bm25_bound`). Tokens are taken highest bound first: SQLite
scores, exactly, the memories holding one of the first ``i`` tokens (their FTS5
instances joined to the scope's ``keyword_docs`` rows, each memory's frequencies counted
in its stored tokens) and hands back the best ``limit``. A memory holding none of those
tokens scores at most the sum of the other tokens' bounds; once that is below the
``limit``-th score, the ranking is final and the other tokens' postings are never read.
Python receives ``limit`` rows per step; SQLite reads the postings of the tokens taken
(O(their matches), in C).

A score is the sum, in query-token order, of ``idf * tf`` with the operations of
:func:`.keyword_postings.bm25_tf` in the same order on IEEE doubles, so it equals what
:meth:`.keyword_postings.ScopeDocs.score` gives for a held scope, bit for bit.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from memoweave.index.keyword_postings import K1, B

SLACK = 1 + 1e-9
"""Bounds are compared after this factor, so float rounding never ends a search early."""


def _scored_sql(
    idf: dict[str, float],
    docs: str,
    where: str,
    params: Sequence[object],
    avg_length: float,
) -> tuple[str, list[object]]:
    """A query of (memory id, BM25 > 0) of the scope's memories chosen by ``docs`` (a
    query of ``keyword_fts`` rowids, whose parameters come first), and its parameters
    after those of ``docs``. ``where`` (with ``params``) applies to the FTS row's scope
    columns, which equal ``keyword_docs``'. One FTS row read per memory gives its id,
    scope, length and every query token's frequency."""
    counts, weights = [], []
    before: list[object] = []
    after: list[object] = []
    for i, (token, weight) in enumerate(idf.items()):
        needle = f" {token} "
        # counted in ``doubled`` (each token between two spaces of its own, so repeats
        # are found too), only where ``spaced`` holds it at all
        counts.append(
            f"CASE WHEN instr(spaced, ?) THEN (length(doubled) - length(replace(doubled, ?, ''))) "
            f"/ ? ELSE 0 END AS f{i}"
        )
        before += [needle, needle, len(needle)]
        weights.append(f"(? * (f{i} * ? / (f{i} + ? * (? + ? * length / avg))))")  # bm25_tf
        after += [weight, K1 + 1, K1, 1 - B, B]
    sql = (
        f"WITH chosen AS MATERIALIZED ({docs}), counted AS MATERIALIZED ("
        f"SELECT memory_id, length, ? AS avg, {', '.join(counts)} FROM ("
        "SELECT f.memory_id AS memory_id, ' ' || f.tokens || ' ' AS spaced, "
        "' ' || replace(f.tokens, ' ', '  ') || ' ' AS doubled, "
        "length(f.tokens) - length(replace(f.tokens, ' ', '')) + 1 AS length "
        f"FROM chosen JOIN keyword_fts AS f ON f.rowid = chosen.doc WHERE {where})) "
        f"SELECT memory_id, {' + '.join(weights)} AS score FROM counted WHERE score > 0"
    )
    return sql, [avg_length, *before, *params, *after]


def top_k(
    conn: sqlite3.Connection,
    idf: dict[str, float],
    bounds: dict[str, float],
    where: str,
    params: Sequence[object],
    avg_length: float,
    limit: int,
) -> list[tuple[str, float]]:
    """The best ``limit`` (memory id, BM25 > 0) of the scope, best first (ties by id),
    for the query tokens of ``idf`` (in query order, each with its bound in ``bounds``);
    ``where`` on the FTS row's scope columns. Each step scores the memories holding its
    token and none of the tokens before it."""
    order = sorted(idf, key=lambda t: (-bounds[t], t))
    hits: list[tuple[str, float]] = []
    for taken, token in enumerate(order):
        before = order[:taken]
        docs = "SELECT DISTINCT doc FROM keyword_vocab WHERE term = ?"
        if before:
            docs += (
                " EXCEPT SELECT doc FROM keyword_vocab "
                f"WHERE term IN ({', '.join('?' * len(before))})"
            )
        sql, scoring = _scored_sql(idf, docs, where, params, avg_length)
        rows = conn.execute(
            f"{sql} ORDER BY score DESC, memory_id LIMIT ?", [token, *before, *scoring, limit]
        ).fetchall()
        found = [(memory_id, float(score)) for memory_id, score in rows]
        hits = sorted([*hits, *found], key=lambda hit: (-hit[1], hit[0]))[:limit]
        rest = sum(bounds[t] for t in order[taken + 1 :])
        if len(hits) == limit and rest * SLACK < hits[-1][1]:
            break  # a memory holding none of the tokens taken cannot rank
    return hits


def scores_of(
    conn: sqlite3.Connection,
    memory_ids: Sequence[str],
    idf: dict[str, float],
    where: str,
    params: Sequence[object],
    avg_length: float,
) -> dict[str, float]:
    """BM25 (> 0) of those of ``memory_ids`` in the scope, as :func:`top_k` scores them."""
    docs = (
        "SELECT rowid AS doc FROM keyword_docs "
        f"WHERE memory_id IN ({', '.join('?' * len(memory_ids))})"
    )
    sql, scoring = _scored_sql(idf, docs, where, params, avg_length)
    rows = conn.execute(sql, [*memory_ids, *scoring]).fetchall()
    return {memory_id: float(score) for memory_id, score in rows}
