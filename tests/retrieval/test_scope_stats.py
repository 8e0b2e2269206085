"""The per-scope statistics tables (``scope_docs``, ``scope_terms``) equal a recount of
the index rows after every kind of write, for every scope and status and for each
index; an older home without them gets them counted on open; a first search of a large
scope reads them instead of counting the scope's rows or a term's matches."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memoweave.index import keyword_postings, scope_stats
from memoweave.index.entity_index import EntityIndex
from memoweave.index.keyword_index import KeywordIndex
from memoweave.index.scope_cache import scope_name, scopes_of
from memoweave.memory.history import HistoryStore

from .test_incremental_index import SEARCHED, observe, random_doc, random_docs

Stats = dict[str, dict[Any, Any]]


def recount(history: HistoryStore) -> dict[str, Stats]:
    """Both indexes' statistics counted from their rows: per (scope, status) the
    documents and total length, per (scope, term, status) df, instances, shortest."""
    conn = history.connection
    keyword = conn.execute(
        "SELECT d.user_id, d.agent_id, d.run_id, d.status, f.tokens FROM keyword_docs AS d "
        "JOIN keyword_fts AS f ON f.rowid = d.rowid"
    ).fetchall()
    linked: dict[str, tuple[Any, str, list[str]]] = {}
    for memory_id, entity, *ids, status in conn.execute(
        "SELECT memory_id, entity, user_id, agent_id, run_id, status FROM entity_links"
    ):
        linked.setdefault(memory_id, (tuple(ids), status, []))[2].append(entity)
    counted = {
        "keyword": [((u, a, r), s, t.split(), len(t.split())) for u, a, r, s, t in keyword],
        "entity": [(ids, s, entities, 0) for ids, s, entities in linked.values()],
    }
    result = {}
    for namespace, docs in counted.items():
        sizes: Counter[str] = Counter()
        per_scope: dict[Any, list[int]] = {}
        terms: dict[Any, list[int]] = {}
        for ids, status, words, length in docs:
            for scope in scopes_of(ids):
                name = scope_name(scope)
                sizes[name] += 1
                found = per_scope.setdefault((name, status), [0, 0])
                found[0] += 1
                found[1] += length
                for term, frequency in Counter(words).items():
                    t = terms.setdefault((name, term, status), [0, 0, length])
                    t[0], t[1], t[2] = t[0] + 1, t[1] + frequency, min(t[2], length)
        result[namespace] = {"docs": per_scope, "terms": terms, "sizes": dict(sizes)}
    return result


def stored(history: HistoryStore, namespace: str) -> Stats:
    conn = history.connection
    docs = conn.execute(
        "SELECT scope, status, docs, total_length FROM scope_docs WHERE namespace = ?",
        (namespace,),
    )
    terms = conn.execute(
        "SELECT scope, term, status, df, instances, shortest FROM scope_terms WHERE namespace = ?",
        (namespace,),
    )
    kept = conn.execute("SELECT scope FROM scope_terms_kept WHERE namespace = ?", (namespace,))
    return {
        "docs": {(s, st): [n, t] for s, st, n, t in docs},
        "terms": {(s, term, st): [df, n, short] for s, term, st, df, n, short in terms},
        "kept": {name for (name,) in kept},
    }


def check(history: HistoryStore, kept_from: int) -> None:
    """The tables equal a recount; the kept scopes' terms too (their shortest length a
    lower bound once memories were removed); every scope over ``kept_from`` is kept."""
    for namespace, counted in recount(history).items():
        tables = stored(history, namespace)
        assert tables["docs"] == counted["docs"], namespace
        big = {name for name, size in counted["sizes"].items() if size > kept_from}
        assert big <= tables["kept"], namespace
        expected = {k: v for k, v in counted["terms"].items() if k[0] in tables["kept"]}
        assert tables["terms"].keys() == expected.keys(), namespace
        for key, (df, instances, shortest) in expected.items():
            got = tables["terms"][key]
            assert got[:2] == [df, instances], (namespace, key)
            assert got[2] <= shortest and (got[2] > 0 or namespace == "entity"), (namespace, key)


def write(rng: random.Random, history: HistoryStore, indexes: tuple[Any, Any]) -> None:
    """One random write through both indexes: add / replace (a status change among
    them), delete, or delete a scope."""
    ids = [f"m{i}" for i in range(30)]
    action = rng.random()
    docs = [random_doc(rng, rng.choice(ids)) for _ in range(rng.randint(1, 5))]
    gone, scope = rng.sample(ids, rng.randint(1, 4)), rng.choice(SEARCHED)
    with history.transaction() as conn:
        for index in indexes:
            if action < 0.65:
                index.upsert(conn, list({d.memory_id: d for d in docs}.values()))
            elif action < 0.93:
                index.delete(conn, gone)
            else:
                index.delete_scope(conn, scope)


@pytest.mark.parametrize(("seed", "kept_from"), [(1, 0), (2, 4), (3, 8), (4, 10**9)])
def test_statistics_equal_a_recount_after_every_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, kept_from: int
) -> None:
    monkeypatch.setattr(scope_stats, "TERMS_KEPT_FROM", kept_from)
    rng = random.Random(seed)
    history = HistoryStore(tmp_path / "h.db")
    indexes = (KeywordIndex(history), EntityIndex(history))
    for step in range(80):
        write(rng, history, indexes)
        check(history, kept_from)
        if step % 20 == 19:  # reopened: counted again from the rows, as an older home
            history.close()
            history = HistoryStore(tmp_path / "h.db")
            indexes = (KeywordIndex(history), EntityIndex(history))
            check(history, kept_from)
    indexes[0].reset()
    indexes[1].reset()
    assert stored(history, "keyword") == stored(history, "entity") == {
        "docs": {}, "terms": {}, "kept": set()
    }  # fmt: skip
    history.close()


def _older(history: HistoryStore) -> None:
    """Make the home look written before the statistics tables existed."""
    with history.transaction() as conn:
        for table in ("scope_docs", "scope_terms", "scope_terms_kept"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("DELETE FROM index_meta WHERE name LIKE '%-stats'")


def _filled(path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A home of 60 random memories whose scopes of more than 3 keep term statistics and
    are ranked from the tables at their first search."""
    monkeypatch.setattr(scope_stats, "TERMS_KEPT_FROM", 3)
    monkeypatch.setattr(keyword_postings, "HELD_FROM_FIRST_SEARCH", 0)
    history = HistoryStore(path)
    keyword, entities = KeywordIndex(history), EntityIndex(history)
    with history.transaction() as conn:
        docs = random_docs(random.Random(seed), 60)
        keyword.upsert(conn, docs)
        entities.upsert(conn, docs)
    history.close()


def test_an_older_home_gets_its_statistics_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword_postings, "SCANNED_MAX_DOCS", 0)
    path = tmp_path / "h.db"
    _filled(path, 5, monkeypatch)
    history = HistoryStore(path)
    before = {n: stored(history, n) for n in ("keyword", "entity")}
    _older(history)
    history.close()
    history = HistoryStore(path)
    seen = observe(KeywordIndex(history), EntityIndex(history))
    assert {n: stored(history, n) for n in ("keyword", "entity")} == before
    check(history, 3)
    history.close()
    history = HistoryStore(path)
    with history.transaction() as conn:  # the same searches from the grouped passes
        conn.execute("DELETE FROM scope_terms_kept")
    assert observe(KeywordIndex(history), EntityIndex(history)) == seen
    history.close()


def test_a_first_search_counts_no_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large scope's first search (statistics from the tables) reads no term's matches
    and counts no scope: no aggregate over keyword_vocab, keyword_docs or entity_links."""
    path = tmp_path / "h.db"
    _filled(path, 6, monkeypatch)
    history = HistoryStore(path)
    keyword, entities = KeywordIndex(history), EntityIndex(history)
    statements: list[str] = []
    history.connection.set_trace_callback(statements.append)
    seen = observe(keyword, entities)
    history.connection.set_trace_callback(None)
    assert any(hits for hits, *_ in seen.values())
    counting = [
        s
        for s in statements
        if ("COUNT(" in s or "SUM(length)" in s)
        and any(t in s for t in ("keyword_vocab AS v", "FROM keyword_docs", "FROM entity_links"))
    ]
    assert counting == []
    history.close()
