"""The per-scope caches of the keyword and entity indexes, changed in place by this
process's writes, always score exactly like a rebuild from the tables; a write to one
scope leaves other scopes' caches alone; another connection's writes (another process's)
and rolled-back writes are seen by the next search."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memoweave.index import keyword_postings, scope_stats
from memoweave.index.entity_index import EntityIndex
from memoweave.index.keyword_index import KeywordDoc, KeywordIndex
from memoweave.memory.history import HistoryStore
from memoweave.memory.scope import Scope

pytestmark = pytest.mark.usefixtures("cached_small_scopes")

WORDS = "Caroline Melanie Lisbon Porto paints swims bakes bread sea boat tea Paris 2019".split()
USERS, AGENTS, RUNS = ["alice", "bob|x=1"], [None, "coach"], [None, "r/1", "r/2"]
STATUSES = ["active", "superseded"]
QUERIES = ["Caroline Lisbon", "bread tea boat", "Paris 2019 Melanie", "sea sea June Porto"]
SEARCHED = [
    Scope.of(user_id="alice", operation="test"),
    Scope.of(user_id="alice", run_id="r/1", operation="test"),
    Scope.of(user_id="bob|x=1", operation="test"),
    Scope.of(agent_id="coach", operation="test"),
    Scope.of(run_id="r/2", operation="test"),
]


@pytest.fixture(autouse=True)
def first_searches_from_the_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every scope here is small: rank each one's first search in SQLite, as a large one."""
    monkeypatch.setattr(keyword_postings, "HELD_FROM_FIRST_SEARCH", 0)


def random_doc(rng: random.Random, memory_id: str) -> KeywordDoc:
    text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))
    return KeywordDoc(
        memory_id,
        text,
        rng.choice(USERS),
        rng.choice(AGENTS),
        rng.choice(RUNS),
        rng.choice(STATUSES),
    )


def random_docs(rng: random.Random, n: int) -> list[KeywordDoc]:
    """``n`` random docs, ids ``m0`` .. ``m<n-1>``."""
    return [random_doc(rng, f"m{i}") for i in range(n)]


def observe(keyword: KeywordIndex, entities: EntityIndex) -> dict[Any, Any]:
    """Every searched scope's BM25 (all ranked hits, ceiling, a score of an unranked id)
    and entity matches, under both status sets."""
    seen: dict[Any, Any] = {}
    for scope in SEARCHED:
        for statuses in (["active"], ["active", "superseded"]):
            for query in QUERIES:
                scored = keyword.scores(query, scope, statuses=statuses, limit=1000)
                ids = [i for i, _ in scored.hits]
                seen[(scope, tuple(statuses), query)] = (
                    scored.hits,
                    scored.ceiling,
                    scored.score_of([*ids, "m0", "m1", "nope"]),
                    entities.match(query.lower().split(), scope, [*ids, "m0", "m1"], statuses),
                )
    return seen


def rebuilt(history_path: Path) -> dict[Any, Any]:
    """What a new connection with empty caches sees."""
    history = HistoryStore(history_path)
    try:
        return observe(KeywordIndex(history), EntityIndex(history))
    finally:
        history.close()


@pytest.mark.parametrize(
    ("seed", "cap", "kept_from"),
    [(1, 20_000, 0), (2, 20_000, 10**9), (3, 20_000, 4), (4, 3, 0), (4, 3, 10**9)],
)
def test_incremental_caches_score_like_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, cap: int, kept_from: int
) -> None:
    """``cap``: scopes larger than this are ranked inside SQLite (statistics-only entries);
    ``kept_from``: scopes larger than this keep term statistics in tables (others count a
    term's matches)."""
    monkeypatch.setattr(keyword_postings, "CACHE_MAX_DOCS", cap)
    monkeypatch.setattr(scope_stats, "TERMS_KEPT_FROM", kept_from)
    rng = random.Random(seed)
    path = tmp_path / "history.db"
    history = HistoryStore(path)
    keyword, entities = KeywordIndex(history), EntityIndex(history)
    ids = [f"m{i}" for i in range(40)]
    for step in range(60):
        observe(keyword, entities)  # warm every cache before the write
        action = rng.random()
        with history.transaction() as conn:
            if action < 0.6:
                docs = [random_doc(rng, rng.choice(ids)) for _ in range(rng.randint(1, 4))]
                docs = list({d.memory_id: d for d in docs}.values())
                keyword.upsert(conn, docs)
                entities.upsert(conn, docs)
            elif action < 0.9:
                gone = rng.sample(ids, rng.randint(1, 3))
                keyword.delete(conn, gone)
                entities.delete(conn, gone)
            else:
                scope = rng.choice(SEARCHED)
                keyword.delete_scope(conn, scope)
                entities.delete_scope(conn, scope)
        assert observe(keyword, entities) == rebuilt(path), f"step {step}"
    history.close()


def doc(memory_id: str, text: str, user_id: str = "alice") -> KeywordDoc:
    return KeywordDoc(memory_id, text, user_id, None, None, "active")


DOCS = [
    KeywordDoc("a1", "Caroline paints in Lisbon", "alice", None, None, "active"),
    KeywordDoc("a2", "Caroline swims near Lisbon", "alice", None, None, "active"),
    KeywordDoc("b1", "Melanie bakes bread in Porto", "bob", None, None, "active"),
]
ALICE = Scope.of(user_id="alice", operation="test")
BOB = Scope.of(user_id="bob", operation="test")


def scores(index: KeywordIndex, scope: Scope, query: str) -> dict[str, float]:
    return dict(index.scores(query, scope, statuses=["active"], limit=10).hits)


def count_builds(
    monkeypatch: pytest.MonkeyPatch, index: type[Any] = KeywordIndex
) -> list[tuple[str, bool]]:
    """The scopes (user ids) whose entry of ``index`` is read from the tables, and whether
    it was asked to hold them (a first search is not)."""
    built: list[tuple[str, bool]] = []
    original = index._build

    def build(
        conn: Any, where: str, params: list[object], version: Any, hold: bool, *rest: Any
    ) -> Any:
        built.append((str(params[0]), hold))
        return original(conn, where, params, version, hold, *rest)

    monkeypatch.setattr(index, "_build", staticmethod(build))
    return built


def test_a_write_changes_only_its_scopes_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = HistoryStore(tmp_path / "h.db")
    index = KeywordIndex(history)
    with history.transaction() as conn:
        index.upsert(conn, DOCS)
    built = count_builds(monkeypatch)
    first = scores(index, ALICE, "Caroline Lisbon"), scores(index, BOB, "Porto bread")
    assert built == [("alice", False), ("bob", False)]  # first searches: from SQLite
    assert (scores(index, ALICE, "Caroline Lisbon"), scores(index, BOB, "Porto bread")) == first
    held = [("alice", False), ("bob", False), ("alice", True), ("bob", True)]
    assert built == held
    with history.transaction() as conn:  # this process's own write: applied in place
        index.upsert(conn, [doc("a3", "Caroline moved to Lisbon")])
    assert "a3" in scores(index, ALICE, "Caroline Lisbon")
    assert scores(index, BOB, "Porto bread")
    assert built == held
    history.close()


def test_another_connections_write_rebuilds_only_its_scope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader_db, writer_db = HistoryStore(tmp_path / "h.db"), HistoryStore(tmp_path / "h.db")
    reader, writer = KeywordIndex(reader_db), KeywordIndex(writer_db)
    with writer_db.transaction() as conn:
        writer.upsert(conn, DOCS)
    built = count_builds(monkeypatch)
    before = scores(reader, ALICE, "Caroline Lisbon")
    scores(reader, BOB, "Porto bread")
    with writer_db.transaction() as conn:
        writer.upsert(conn, [doc("b2", "Melanie sails from Porto", user_id="bob")])
        writer.delete(conn, ["a1"])
    after = scores(reader, ALICE, "Caroline Lisbon")
    assert set(after) == set(before) - {"a1"}
    assert "b2" in scores(reader, BOB, "Porto sails")
    assert built == [("alice", False), ("bob", False), ("alice", True), ("bob", True)]
    with writer_db.transaction() as conn:  # bob only: alice's cache stays
        writer.delete(conn, ["b2"])
    assert scores(reader, ALICE, "Caroline Lisbon") == after
    assert "b2" not in scores(reader, BOB, "Porto sails")
    assert built[4:] == [("bob", True)]
    writer_db.close()
    reader_db.close()


def test_a_rolled_back_write_is_not_served(tmp_path: Path) -> None:
    history = HistoryStore(tmp_path / "h.db")
    index = KeywordIndex(history)
    with history.transaction() as conn:
        index.upsert(conn, DOCS)
    before = scores(index, ALICE, "Caroline Lisbon")
    with pytest.raises(RuntimeError), history.transaction() as conn:
        index.upsert(conn, [doc("a3", "Caroline in Lisbon")])
        index.delete(conn, ["a1"])
        raise RuntimeError("the write fails after the index hook ran")
    assert scores(index, ALICE, "Caroline Lisbon") == before
    history.close()


def test_interleaved_writes_of_two_connections_score_like_a_rebuild(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    first_db, second_db = HistoryStore(path), HistoryStore(path)
    first, second = KeywordIndex(first_db), KeywordIndex(second_db)
    with first_db.transaction() as conn:
        first.upsert(conn, DOCS)
    scores(first, ALICE, "Caroline Lisbon")  # first's cache is warm ...
    with second_db.transaction() as conn:  # ... when second writes alice
        second.upsert(conn, [doc("a3", "Caroline sails to Lisbon")])
    with first_db.transaction() as conn:  # then first writes alice without a search between
        first.delete(conn, ["a2"])
    fresh_db = HistoryStore(path)
    fresh = KeywordIndex(fresh_db)
    assert scores(first, ALICE, "Caroline Lisbon") == scores(fresh, ALICE, "Caroline Lisbon")
    assert set(scores(first, ALICE, "Caroline Lisbon")) == {"a1", "a3"}
    for history in (first_db, second_db, fresh_db):
        history.close()


QUERY_IN_NEW_PROCESS = """
import json, sys
from memoweave.index.keyword_index import KeywordIndex
from memoweave.memory.history import HistoryStore
from memoweave.memory.scope import Scope
index = KeywordIndex(HistoryStore(sys.argv[1]))
scope = Scope.of(user_id="alice", operation="test")
hits = index.scores(sys.argv[2], scope, statuses=["active"], limit=10).hits
print(json.dumps({"hits": hits, "lemmatizer_loaded": "simplemma" in sys.modules}))
"""


def test_a_query_of_indexed_words_needs_no_lemmatizer(tmp_path: Path) -> None:
    history = HistoryStore(tmp_path / "h.db")
    index = KeywordIndex(history)
    docs = [doc("a1", "Caroline was painting boats"), doc("a2", "Caroline's children went home")]
    with history.transaction() as conn:
        index.upsert(conn, docs)
    history.close()

    def new_process(query: str) -> dict[str, Any]:
        out = subprocess.run(
            [sys.executable, "-c", QUERY_IN_NEW_PROCESS, str(tmp_path / "h.db"), query],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return json.loads(out.stdout)  # type: ignore[no-any-return]

    history = HistoryStore(tmp_path / "h.db")
    for query in ("children painting", "Caroline went"):
        here = KeywordIndex(history).scores(query, ALICE, statuses=["active"], limit=10).hits
        seen = new_process(query)
        assert [tuple(h) for h in seen["hits"]] == here and here
        assert seen["lemmatizer_loaded"] is False
    history.close()
    form = new_process("boat paints")  # "paints" never indexed, but a form of "paint"
    assert form["lemmatizer_loaded"] is False and form["hits"][0][0] == "a1"
    one = new_process("boat instrument")  # one word of a lemma no memory holds
    assert one["lemmatizer_loaded"] is False and one["hits"][0][0] == "a1"
    two = new_process("boat violins cellos")  # two such words may share a lemma
    assert two["lemmatizer_loaded"] is True and two["hits"][0][0] == "a1"


def test_a_first_search_from_the_tables_matches_the_held_entry(tmp_path: Path) -> None:
    """A process's first search of a scope reads statistics only and answers from SQLite;
    the next one holds the scope: both give the same hits, scores and entity links (a
    memory's entities in query order)."""
    history = HistoryStore(tmp_path / "h.db")
    keyword, entities = KeywordIndex(history), EntityIndex(history)
    with history.transaction() as conn:
        docs = [*DOCS, doc("a3", "Caroline met Melanie in Paris and Lisbon")]
        keyword.upsert(conn, docs)
        entities.upsert(conn, docs)
    query, found = ["paris", "caroline", "melanie", "lisbon"], ["a1", "a2", "a3"]
    seen = [
        (
            keyword.scores("Paris Caroline Lisbon", ALICE, statuses=["active"], limit=10).hits,
            entities.match(query, ALICE, found, ["active"]),
        )
        for _ in range(3)
    ]
    assert seen[0][1].links["a3"] == ("paris", "caroline", "melanie", "lisbon")
    assert seen[0] == seen[1] == seen[2]
    history.close()


def test_a_small_scope_is_held_from_its_first_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword_postings, "HELD_FROM_FIRST_SEARCH", 2)
    history = HistoryStore(tmp_path / "h.db")
    index, entities = KeywordIndex(history), EntityIndex(history)
    with history.transaction() as conn:
        index.upsert(conn, DOCS)
        entities.upsert(conn, DOCS)
    built, linked = count_builds(monkeypatch), count_builds(monkeypatch, EntityIndex)
    for _ in range(2):
        scores(index, ALICE, "Caroline Lisbon"), scores(index, BOB, "Porto bread")
        entities.match(["caroline"], ALICE, ["a1"], ["active"])
    assert built == [("alice", False), ("bob", False)]  # held at once: not read again
    assert linked == [("alice", False)]
    history.close()
