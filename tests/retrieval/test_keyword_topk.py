"""Scopes too large to hold are ranked in SQLite with MaxScore's early stop: the top hits,
their scores and the scores of other ids equal, bit for bit, those of the same scope held
in memory, for every limit; the postings of tokens that cannot change the ranking are
never read; writes of this connection keep the bounds valid."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memoweave.index import keyword_postings, keyword_topk, scope_stats
from memoweave.index.keyword_index import KeywordDoc, KeywordIndex, KeywordScores
from memoweave.memory.history import HistoryStore
from memoweave.memory.scope import Scope

pytestmark = pytest.mark.usefixtures("cached_small_scopes")

# a skewed vocabulary: the first words are in most memories, the last in few
WORDS = [f"w{i}" for i in range(40)]
WEIGHTS = [1 / (i + 1) for i in range(len(WORDS))]
USER = "u|1=/x"
SCOPE = Scope.of(user_id=USER, operation="test")
NESTED = Scope.of(user_id=USER, run_id="r/1", operation="test")
STATUSES = ["active"]


def text(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, WEIGHTS, k=rng.randint(1, 12)))


def docs(rng: random.Random, count: int) -> Iterator[KeywordDoc]:
    for i in range(count):
        run = rng.choice([None, "r/1"])
        status = rng.choice(["active", "active", "active", "superseded"])
        yield KeywordDoc(f"m{i}|{rng.random():.6f}", text(rng), USER, None, run, status)
        if i % 7 == 0:  # another user's memories share the table, never the statistics
            yield KeywordDoc(f"o{i}", text(rng), "other", None, None, "active")


def ranked(index: KeywordIndex, query: str, scope: Scope, limit: int) -> KeywordScores:
    return index.scores(query, scope, statuses=STATUSES, limit=limit)


def queries(rng: random.Random) -> list[str]:
    rare = WORDS[20:]
    return [
        *(f"{rng.choice(rare)} {rng.choice(WORDS[:3])}" for _ in range(6)),
        *(" ".join(rng.sample(WORDS, rng.randint(2, 6))) for _ in range(10)),
        "w0 w1 w2",  # common tokens only
        "w39 w39 w0",
    ]


def assert_same_as_held(
    monkeypatch: pytest.MonkeyPatch, big: KeywordIndex, held: KeywordIndex, qs: list[str]
) -> None:
    for scope in (SCOPE, NESTED):
        for query in qs:
            for limit in (1, 3, 10, 40):
                monkeypatch.setattr(keyword_postings, "CACHE_MAX_DOCS", 3)
                got = ranked(big, query, scope, limit)
                monkeypatch.setattr(keyword_postings, "CACHE_MAX_DOCS", 20_000)
                want = ranked(held, query, scope, limit)
                assert got.hits == want.hits, (query, limit)
                assert got.ceiling == want.ceiling
                others = [f"m{i}" for i in range(5)] + [i for i, _ in want.hits] + ["o0", "?"]
                everyone = want.score_of([i for i, _ in ranked(held, query, scope, 10_000).hits])
                assert got.score_of(others) == want.score_of(others)
                assert got.score_of(list(everyone)) == everyone


@pytest.mark.parametrize(("seed", "kept_from"), [(1, 0), (2, 0), (2, 10**9)])
def test_big_scopes_rank_exactly_like_held_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, kept_from: int
) -> None:
    """``kept_from``: the tokens' statistics come from ``scope_terms`` (0) or from their
    postings (scopes this small keep none)."""
    monkeypatch.setattr(scope_stats, "TERMS_KEPT_FROM", kept_from)
    rng = random.Random(seed)
    history = HistoryStore(tmp_path / "h.db")
    big, held = KeywordIndex(history), KeywordIndex(history)
    with history.transaction() as conn:
        big.upsert(conn, docs(rng, 400))
    qs = queries(rng)
    assert_same_as_held(monkeypatch, big, held, qs)
    # this connection's writes change the big entries in place: a memory shorter than
    # any before, a token held more times than before, removals
    monkeypatch.setattr(keyword_postings, "CACHE_MAX_DOCS", 3)
    with history.transaction() as conn:
        big.upsert(conn, [KeywordDoc("short", "w39", USER, None, "r/1", "active")])
        big.upsert(conn, [KeywordDoc("many", "w25 " * 6 + "w1", USER, None, None, "active")])
        big.delete(conn, [f"o{i}" for i in range(0, 400, 7)])
    fresh = KeywordIndex(history)
    assert_same_as_held(monkeypatch, big, fresh, [*qs, "w39 w1", "w25 w1 w0"])
    history.close()


def test_tokens_that_cannot_change_the_ranking_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword_postings, "CACHE_MAX_DOCS", 3)
    history = HistoryStore(tmp_path / "h.db")
    index = KeywordIndex(history)
    common = [KeywordDoc(f"c{i}", f"tea cup {i}", USER, None, None, "active") for i in range(300)]
    rare = [KeywordDoc(f"r{i}", "lisbon tea trams", USER, None, None, "active") for i in range(5)]
    with history.transaction() as conn:
        index.upsert(conn, [*common, *rare])
    steps: list[str] = []
    for name in ("_stored_sql", "_counted_sql"):
        step = getattr(keyword_topk, name)

        def spy(*args: Any, name: str = name, step: Any = step) -> Any:
            steps.append(name)
            return step(*args)

        monkeypatch.setattr(keyword_topk, name, spy)
    hits = ranked(index, "lisbon tea", SCOPE, 3).hits
    assert [i for i, _ in hits] == ["r0", "r1", "r2"]
    assert steps == ["_stored_sql"]  # "tea"'s 305 postings: never read
    steps.clear()
    hits = ranked(index, "lisbon tea", SCOPE, 6).hits  # 5 hold "lisbon": "tea" decides
    assert [i for i, _ in hits][:5] == [f"r{i}" for i in range(5)] and len(hits) == 6
    assert steps == ["_stored_sql", "_counted_sql"]
    history.close()


def test_an_empty_or_unmatched_query_scores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword_postings, "CACHE_MAX_DOCS", 1)
    history = HistoryStore(tmp_path / "h.db")
    index = KeywordIndex(history)
    with history.transaction() as conn:
        index.upsert(
            conn, [KeywordDoc(f"a{i}", "tea", USER, None, None, "active") for i in range(3)]
        )
    for query in ("", "coffee", "'; DROP TABLE keyword_docs; --"):
        got = ranked(index, query, SCOPE, 5)
        assert got.hits == [] and got.score_of(["a0"]) == {}
    assert [i for i, _ in ranked(index, "tea", SCOPE, 5).hits] == ["a0", "a1", "a2"]
    history.close()


@pytest.mark.parametrize("kept_from", [0, 10**9], ids=["kept", "counted"])
@pytest.mark.parametrize(
    "added", ["porto", "porto porto porto porto porto porto"], ids=["shorter", "more-often"]
)
def test_a_write_that_raises_a_tokens_bound_is_ranked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, added: str, kept_from: int
) -> None:
    """A memory shorter than any before, or holding a token more often than any before,
    can score above what the warm entry's bound allowed until then; a new connection's
    bounds (from ``scope_terms`` if kept, else from the postings) allow it too."""
    monkeypatch.setattr(scope_stats, "TERMS_KEPT_FROM", kept_from)
    monkeypatch.setattr(keyword_postings, "CACHE_MAX_DOCS", 3)
    history = HistoryStore(tmp_path / "h.db")
    index = KeywordIndex(history)
    rows = [
        *(KeywordDoc(f"c{i}", f"tea cup {i}", USER, None, None, "active") for i in range(300)),
        *(KeywordDoc(f"r{i}", "lisbon tea trams yellow", USER, None, None, "active")
          for i in range(5)),
        *(KeywordDoc(f"p{i}", f"porto x{i}", USER, None, None, "active") for i in range(20)),
    ]  # fmt: skip
    with history.transaction() as conn:
        index.upsert(conn, rows)
    before = ranked(index, "lisbon porto", SCOPE, 3).hits
    assert [i for i, _ in before] == ["r0", "r1", "r2"]
    with history.transaction() as conn:
        index.upsert(conn, [KeywordDoc("new", added, USER, None, None, "active")])
    hits = ranked(index, "lisbon porto", SCOPE, 3).hits
    assert hits[0][0] == "new"
    assert ranked(KeywordIndex(history), "lisbon porto", SCOPE, 3).hits == hits
    monkeypatch.setattr(keyword_postings, "CACHE_MAX_DOCS", 20_000)
    assert hits == ranked(KeywordIndex(history), "lisbon porto", SCOPE, 3).hits
    history.close()


def test_rows_read_from_the_fts5_content_table_equal_the_virtual_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(3)
    history = HistoryStore(tmp_path / "h.db")
    direct = KeywordIndex(history)
    with history.transaction() as conn:
        direct.upsert(conn, docs(rng, 300))
        assert keyword_topk.fts_rows(conn) == keyword_topk.CONTENT_ROWS  # the fast path
        every = "SELECT * FROM {} ORDER BY doc"
        content = conn.execute(every.format(keyword_topk.CONTENT_ROWS)).fetchall()
        assert content == conn.execute(every.format(keyword_topk.VTAB_ROWS)).fetchall()
        assert len(content) > 300
    with monkeypatch.context() as patch:
        patch.setattr(keyword_topk, "fts_rows", lambda conn: keyword_topk.VTAB_ROWS)
        through_vtab = KeywordIndex(history)
    for cap in (3, 20_000):  # ranked in SQLite, then held (built from the rows)
        monkeypatch.setattr(keyword_postings, "CACHE_MAX_DOCS", cap)
        for scope in (SCOPE, NESTED):
            for query in queries(rng):
                got, want = ranked(direct, query, scope, 10), ranked(through_vtab, query, scope, 10)
                assert got.hits == want.hits and got.ceiling == want.ceiling
                ids = [i for i, _ in ranked(through_vtab, query, scope, 40).hits] + ["o0", "?"]
                assert got.score_of(ids) == want.score_of(ids)
    history.close()
    assert keyword_topk.fts_rows(sqlite3.connect(":memory:")) == keyword_topk.VTAB_ROWS
