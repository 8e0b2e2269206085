"""Top-k BM25 of a scope too large to hold in memory: MaxScore over SQLite's postings.

The scope's statistics-only entry (:class:`.keyword_postings.ScopeDocs`) knows, for each
query token, how many of the scope's memories hold it and bounds on the most times one
memory holds it and on the shortest memory holding it, which bound what the token can
add to a score (:func:`.keyword_postings.bm25_bound`). Tokens are taken highest bound
first. A step makes SQLite score, exactly, the memories holding its token and none of
the tokens taken before (each read once, by rowid, from the FTS row: scope, length and
every query token's frequency from its stored tokens) and hand back the best ``limit``.
A memory holding none of the tokens taken scores at most the sum of the other tokens'
bounds; once that is below the ``limit``-th score, the ranking is final and the other
tokens' postings are never read. When a token's memories are too many for a step to pay
(:data:`STEP_SHARE`), one last step scores every memory holding a token not taken from
the tokens' FTS5 instances instead. Python receives ``limit`` rows per step; SQLite
reads the postings of the tokens taken (O(their matches), in C).

A score is the sum, in query-token order, of ``idf * tf`` with the operations of
:func:`.keyword_postings.bm25_tf` in the same order on IEEE doubles, so it equals what
:meth:`.keyword_postings.ScopeDocs.score` gives for a held scope, bit for bit.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from memoweave.index.keyword_postings import K1, B

VTAB_ROWS = (
    "(SELECT rowid AS doc, memory_id, user_id, agent_id, run_id, status, tokens FROM keyword_fts)"
)
CONTENT_ROWS = (
    "(SELECT id AS doc, c0 AS memory_id, c1 AS user_id, c2 AS agent_id, c3 AS run_id, "
    "c4 AS status, c5 AS tokens FROM keyword_fts_content)"
)
_CONTENT_COLUMNS = ["id", "c0", "c1", "c2", "c3", "c4", "c5"]


def fts_rows(conn: sqlite3.Connection) -> str:
    """The stored rows of ``keyword_fts`` as a subquery of (doc = rowid, memory_id,
    user_id, agent_id, run_id, status, tokens): FTS5's content table read directly when
    it has the layout FTS5 gives it (``id``, then ``c0``... in declared column order), so
    a row read by rowid is one B-tree lookup instead of a virtual-table call (~30 % of a
    MaxScore step at 100k); else the virtual table itself (same values)."""
    columns = [row[1] for row in conn.execute("PRAGMA table_info(keyword_fts_content)")]
    return CONTENT_ROWS if columns == _CONTENT_COLUMNS else VTAB_ROWS


SLACK = 1 + 1e-9
"""Bounds are compared after this factor, so float rounding never ends a search early."""


STEP_SHARE = 0.25
"""A token's memories are scored from their stored text (a MaxScore step) only if they
are at most this share of the later tokens' postings, which the step may spare; the
share halves after each step that did not end the ranking."""


def _score(idf: dict[str, float]) -> tuple[str, list[object]]:
    """BM25 over columns ``f0``, ``f1``... (each query token's frequency, in ``idf``'s
    order), ``length`` and ``avg``, and its parameters: bm25_tf's operations in order."""
    weights = [f"(? * (f{i} * ? / (f{i} + ? * (? + ? * length / avg))))" for i in range(len(idf))]
    return " + ".join(weights), [x for w in idf.values() for x in (w, K1 + 1, K1, 1 - B, B)]


def _stored_sql(
    idf: dict[str, float],
    docs: str,
    where: str,
    params: Sequence[object],
    avg_length: float,
    rows: str,
) -> tuple[str, list[object]]:
    """A query of (memory id, BM25 > 0) of the scope's memories chosen by ``docs`` (a
    query of ``keyword_fts`` rowids, whose parameters come first), and its parameters
    after those of ``docs``. ``where`` (with ``params``) applies to the FTS row's scope
    columns, which equal ``keyword_docs``'. One FTS row read per memory (from ``rows``,
    :func:`fts_rows`) gives its id, scope, length and every query token's frequency."""
    counts: list[str] = []
    needles: list[object] = []
    for i, token in enumerate(idf):
        needle = f" {token} "
        # 0 where ``spaced`` lacks it, 1 where no second one follows the first (sharing
        # its trailing space), else counted in ``doubled`` (each token between two spaces
        # of its own, so adjacent repeats are found too)
        counts.append(
            f"CASE WHEN NOT instr(spaced, ?) THEN 0 "
            f"WHEN NOT instr(substr(spaced, instr(spaced, ?) + ?), ?) THEN 1 "
            f"ELSE (length(doubled) - length(replace(doubled, ?, ''))) / ? END AS f{i}"
        )
        needles += [needle, needle, len(needle) - 1, needle, needle, len(needle)]
    score, weights = _score(idf)
    sql = (
        f"WITH chosen AS MATERIALIZED ({docs}), counted AS MATERIALIZED ("
        f"SELECT memory_id, length, ? AS avg, {', '.join(counts)} FROM ("
        "SELECT f.memory_id AS memory_id, ' ' || f.tokens || ' ' AS spaced, "
        "' ' || replace(f.tokens, ' ', '  ') || ' ' AS doubled, "
        "length(f.tokens) - length(replace(f.tokens, ' ', '')) + 1 AS length "
        f"FROM chosen JOIN {rows} AS f ON f.doc = chosen.doc WHERE {where})) "
        f"SELECT memory_id, {score} AS score FROM counted WHERE score > 0"
    )
    return sql, [avg_length, *needles, *params, *weights]


def _counted_sql(
    idf: dict[str, float],
    rest: list[str],
    taken: list[str],
    where: str,
    params: Sequence[object],
    avg_length: float,
) -> tuple[str, list[object]]:
    """A query of (memory id, BM25 > 0) of the scope's memories holding one of ``rest``
    and none of ``taken``, and its parameters: each memory's frequencies counted from the
    tokens' FTS5 instances, its length read from ``keyword_docs`` (``where`` on its
    columns, off the scope indexes), no stored text read."""
    counts = ", ".join(f"SUM(term = ?) AS f{i}" for i in range(len(idf)))
    docs = f"term IN ({', '.join('?' * len(rest))})"
    if taken:
        docs += (
            " AND doc NOT IN (SELECT doc FROM keyword_vocab "
            f"WHERE term IN ({', '.join('?' * len(taken))}))"
        )
    score, weights = _score(idf)
    sql = (
        f"WITH counted AS MATERIALIZED (SELECT doc, {counts} FROM keyword_vocab "
        f"WHERE {docs} GROUP BY doc), scored AS MATERIALIZED (SELECT d.memory_id AS memory_id, "
        "d.length AS length, ? AS avg, counted.* FROM counted JOIN keyword_docs AS d "
        f"ON d.rowid = counted.doc WHERE {where}) "
        f"SELECT memory_id, {score} AS score FROM scored WHERE score > 0"
    )
    return sql, [*idf, *rest, *taken, avg_length, *params, *weights]


def top_k(
    conn: sqlite3.Connection,
    idf: dict[str, float],
    bounds: dict[str, float],
    matches: dict[str, int],
    where: str,
    params: Sequence[object],
    avg_length: float,
    limit: int,
    rows: str,
) -> list[tuple[str, float]]:
    """The best ``limit`` (memory id, BM25 > 0) of the scope, best first (ties by id),
    for the query tokens of ``idf`` (in query order, each with its bound in ``bounds`` and
    its document frequency in ``matches``); ``where`` names the scope columns unqualified
    and off the scope indexes (it applies to the FTS row or to ``keyword_docs``' row);
    ``rows``: where the FTS rows are read (:func:`fts_rows`).
    Each MaxScore step scores the memories holding its token and none taken before; past
    :data:`STEP_SHARE`, one last step scores every memory holding a token not taken."""
    order = sorted(idf, key=lambda t: (-bounds[t], t))
    hits: list[tuple[str, float]] = []
    share = STEP_SHARE
    for taken, token in enumerate(order):
        before, rest = order[:taken], order[taken + 1 :]
        if matches[token] <= share * sum(matches[t] for t in rest):
            share /= 2
            docs = "SELECT DISTINCT doc FROM keyword_vocab WHERE term = ?"
            if before:
                docs += (
                    " EXCEPT SELECT doc FROM keyword_vocab "
                    f"WHERE term IN ({', '.join('?' * len(before))})"
                )
            sql, scoring = _stored_sql(idf, docs, where, params, avg_length, rows)
            scoring = [token, *before, *scoring]
        else:
            sql, scoring = _counted_sql(idf, [token, *rest], before, where, params, avg_length)
            rest = []
        ranked = conn.execute(f"{sql} ORDER BY score DESC, memory_id LIMIT ?", [*scoring, limit])
        found = [(memory_id, float(score)) for memory_id, score in ranked]
        hits = sorted([*hits, *found], key=lambda hit: (-hit[1], hit[0]))[:limit]
        if not rest or (len(hits) == limit and sum(bounds[t] for t in rest) * SLACK < hits[-1][1]):
            break  # every memory scored, or one holding none of the tokens taken cannot rank
    return hits


def scores_of(
    conn: sqlite3.Connection,
    memory_ids: Sequence[str],
    idf: dict[str, float],
    where: str,
    params: Sequence[object],
    avg_length: float,
    rows: str,
) -> dict[str, float]:
    """BM25 (> 0) of those of ``memory_ids`` in the scope, as :func:`top_k` scores them."""
    docs = (
        "SELECT rowid AS doc FROM keyword_docs "
        f"WHERE memory_id IN ({', '.join('?' * len(memory_ids))})"
    )
    sql, scoring = _stored_sql(idf, docs, where, params, avg_length, rows)
    scored = conn.execute(sql, [*memory_ids, *scoring]).fetchall()
    return {memory_id: float(score) for memory_id, score in scored}
