"""Scopes of at most ``SCANNED_MAX_DOCS`` memories are scored from their rows at every
search and never cached: the same hits, scores, ceilings and entity matches, bit for bit,
as the same scopes held in the per-scope caches; caches stay bounded however many scopes
are searched; a scope that grows past the bound is cached from then on."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memoweave.index import entity_index, keyword_index, keyword_postings
from memoweave.index.entity_index import EntityIndex
from memoweave.index.keyword_index import KeywordDoc, KeywordIndex
from memoweave.memory.history import HistoryStore
from memoweave.memory.scope import Scope

from .test_incremental_index import SEARCHED, count_builds, observe, random_docs


def cache_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword_postings, "SCANNED_MAX_DOCS", 0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scanned_scopes_score_like_held_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    history = HistoryStore(tmp_path / "h.db")
    keyword, entities = KeywordIndex(history), EntityIndex(history)
    with history.transaction() as conn:
        docs = random_docs(rng, 80)
        keyword.upsert(conn, docs)
        entities.upsert(conn, docs)
        keyword.delete(conn, ["m3", "m7"])  # removals leave the same state in both paths
        entities.delete(conn, ["m3", "m7"])
    scanned = observe(keyword, entities)
    assert len(keyword._cache) == len(entities._cache) == 0  # nothing held
    cache_everything(monkeypatch)
    held_keyword, held_entities = KeywordIndex(history), EntityIndex(history)
    held = observe(held_keyword, held_entities)  # held from the first search (< 2,000)
    assert held_keyword._cache.held > 0 and held_entities._cache.held > 0
    assert scanned == held
    assert observe(held_keyword, held_entities) == held  # and from the held entries
    history.close()


def test_a_scope_growing_past_the_bound_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword_postings, "SCANNED_MAX_DOCS", 2)
    history = HistoryStore(tmp_path / "h.db")
    keyword, entities = KeywordIndex(history), EntityIndex(history)
    alice = Scope.of(user_id="alice", operation="test")
    texts = ["Caroline paints in Lisbon", "Caroline swims", "Melanie sails to Lisbon"]
    built, linked = count_builds(monkeypatch), count_builds(monkeypatch, EntityIndex)

    def search() -> tuple[object, object]:
        hits = keyword.scores("Caroline Lisbon", alice, statuses=["active"], limit=10).hits
        return hits, entities.match(["caroline", "lisbon"], alice, ["a0", "a1", "a2"], ["active"])

    def add(i: int) -> None:
        doc = KeywordDoc(f"a{i}", texts[i], "alice", None, None, "active")
        with history.transaction() as conn:
            keyword.upsert(conn, [doc])
            entities.upsert(conn, [doc])

    add(0)
    first = search()
    assert built == linked == []  # one memory, one link: scanned
    add(1)
    add(2)
    grown = search()
    assert grown != first
    assert built == [("alice", False)] and linked == [("alice", False)]  # cached now
    fresh = KeywordIndex(history), EntityIndex(history)
    assert (
        search()
        == grown
        == (
            fresh[0].scores("Caroline Lisbon", alice, statuses=["active"], limit=10).hits,
            fresh[1].match(["caroline", "lisbon"], alice, ["a0", "a1", "a2"], ["active"]),
        )
    )
    history.close()


def test_caches_stay_bounded_over_many_scopes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many small scopes are never held; cached ones never exceed the budget."""
    history = HistoryStore(tmp_path / "h.db")
    docs = [
        KeywordDoc(f"{u}-{i}", f"Caroline visited Lisbon {i} times", f"u{u}", None, None, "active")
        for u in range(150)
        for i in range(3)
    ]
    keyword, entities = KeywordIndex(history), EntityIndex(history)
    with history.transaction() as conn:
        keyword.upsert(conn, docs)
        entities.upsert(conn, docs)

    def search_all(keyword: KeywordIndex, entities: EntityIndex) -> None:
        for u in range(150):
            scope = Scope.of(user_id=f"u{u}", operation="test")
            keyword.scores("Caroline Lisbon", scope, statuses=["active"], limit=10)
            entities.match(["caroline"], scope, [f"{u}-0"], ["active"])

    search_all(keyword, entities)
    assert len(keyword._cache) == len(entities._cache) == 0
    cache_everything(monkeypatch)
    monkeypatch.setattr(keyword_index, "CACHE_TOTAL_DOCS", 10)
    monkeypatch.setattr(entity_index, "CACHE_TOTAL_DOCS", 10)
    keyword, entities = KeywordIndex(history), EntityIndex(history)
    search_all(keyword, entities)
    for cache in (keyword._cache, entities._cache):
        assert 0 < cache.held <= 10 and len(cache) <= 4
    history.close()


@pytest.mark.parametrize("path", ["scanned", "held", "from the tables"])
def test_scope_lookups_never_scan_a_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """User, agent, run and nested scopes are looked up through an index on every path
    (a scan of entity_links took 3.7 s per search at 1M memories for an agent scope)."""
    if path != "scanned":
        cache_everything(monkeypatch)
    if path == "from the tables":
        monkeypatch.setattr(keyword_postings, "HELD_FROM_FIRST_SEARCH", 0)
    rng = random.Random(9)
    history = HistoryStore(tmp_path / "h.db")
    keyword, entities = KeywordIndex(history), EntityIndex(history)
    with history.transaction() as conn:
        docs = random_docs(rng, 60)
        keyword.upsert(conn, docs)
        entities.upsert(conn, docs)
    statements: list[str] = []
    history.connection.set_trace_callback(statements.append)
    for _ in range(2):  # a first search and a later one
        observe(keyword, entities)
    history.connection.set_trace_callback(None)
    plans = [
        detail
        for sql in statements
        if sql.lstrip().upper().startswith("SELECT")
        for *_, detail in history.connection.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
    ]
    assert len(SEARCHED) > 4 and plans
    assert not [p for p in plans if p.startswith(("SCAN entity_links", "SCAN keyword_docs"))]
    history.close()
