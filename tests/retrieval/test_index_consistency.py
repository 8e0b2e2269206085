"""The core's keyword index and entity links follow every write, stay consistent with the
store after injected failures, and search honours the same filters as get_all."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from memoweave.errors import HistoryError, VectorStoreError
from memoweave.index.entity_index import EntityIndex
from memoweave.memory import Memory
from memoweave.providers.vector_store import VectorRecord
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import ScriptedLLM

from .conftest import BuildMemory, add_texts


def index_rows(memory: Memory) -> dict[str, Any]:
    """Every row of the keyword index and the entity links, as sorted tuples."""
    conn = memory._providers.history.connection
    return {
        "keyword": sorted(
            conn.execute("SELECT memory_id, status, tokens FROM keyword_fts").fetchall()
        ),
        "entities": sorted(
            conn.execute("SELECT memory_id, entity, status FROM entity_links").fetchall()
        ),
        "docs": sorted(
            conn.execute("SELECT memory_id, status, length FROM keyword_docs").fetchall()
        ),
    }


def entities(memory: Memory, memory_id: str) -> list[str]:
    index: EntityIndex = memory._providers.indexes.entities
    return index.entities_of(memory_id)


def test_entity_links_follow_update_and_delete(build_memory: BuildMemory) -> None:
    memory = build_memory()
    (mid,) = add_texts(memory, ["Caroline moved to Paris in 2019"])
    assert entities(memory, mid) == ["2019", "caroline", "paris"]
    memory.update(mid, text="Caroline moved to Rome")
    assert entities(memory, mid) == ["caroline", "rome"]
    hits = memory.search("Paris", user_id="alice", explain=True)["results"]
    assert all("entity" not in h["explain"] for h in hits)
    memory.delete(mid)
    assert entities(memory, mid) == []
    assert index_rows(memory) == {"keyword": [], "entities": [], "docs": []}


def test_entity_links_follow_supersession(build_memory: BuildMemory) -> None:
    llm = ScriptedLLM()
    memory = build_memory(llm=llm)
    llm.push({"memories": [{"text": "Alice lives in Berlin"}]})
    (old,) = [r["id"] for r in memory.add("I live in Berlin.", user_id="alice")["results"]]
    llm.push({"memories": [{"text": "Alice lives in Paris", "replaces": [1]}]})
    out = memory.add("I moved to Paris.", user_id="alice")["results"]
    new = next(r["id"] for r in out if r["event"] == "ADD")
    rows = index_rows(memory)["entities"]
    assert (old, "berlin", "superseded") in rows
    assert (new, "paris", "active") in rows
    # the superseded memory is hidden from search unless asked for, in every signal
    hits = memory.search("Alice Berlin", user_id="alice")["results"]
    assert old not in [h["id"] for h in hits]
    everything = memory.search("Alice Berlin", user_id="alice", include_superseded=True)
    assert everything["results"][0]["id"] == old


def test_delete_all_and_reset_clear_the_indexes(build_memory: BuildMemory) -> None:
    memory = build_memory()
    add_texts(memory, ["Bob visited Lisbon"], user_id="bob")
    kept = add_texts(memory, ["Alice visited Oslo"], user_id="alice")
    memory.delete_all(user_id="bob")
    rows = index_rows(memory)
    assert {r[0] for r in rows["keyword"]} == {r[0] for r in rows["entities"]} == set(kept)
    assert {r[0] for r in rows["docs"]} == set(kept)
    memory.reset()
    assert index_rows(memory) == {"keyword": [], "entities": [], "docs": []}


def test_expired_memories_are_excluded_unless_asked_for(build_memory: BuildMemory) -> None:
    memory = build_memory()
    past = (datetime.now(timezone.utc) - timedelta(days=1)).isoformat()
    (gone,) = add_texts(memory, ["Alice has a ticket to Vienna"], expiration_date=past)
    (live,) = add_texts(memory, ["Alice has a map of Vienna"])
    assert [h["id"] for h in memory.search("Vienna ticket", user_id="alice")["results"]] == [live]
    shown = memory.search("Vienna ticket", user_id="alice", show_expired=True)["results"]
    assert shown[0]["id"] == gone


class FlakyStore(InMemoryVectorStore):
    """The real in-memory store, told to fail its next upsert or delete."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_on: str | None = None

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        if self.fail_on == "upsert":
            self.fail_on = None
            raise VectorStoreError("injected upsert failure")
        super().upsert(records)

    def delete(self, ids: Sequence[str]) -> None:
        if self.fail_on == "delete":
            self.fail_on = None
            raise VectorStoreError("injected delete failure")
        super().delete(ids)


@pytest.mark.parametrize("op", ["add", "update", "delete"])
@pytest.mark.parametrize("failure", ["store", "index_write"])
def test_indexes_stay_consistent_after_injected_failures(
    build_memory: BuildMemory, monkeypatch: pytest.MonkeyPatch, op: str, failure: str
) -> None:
    store = FlakyStore()
    memory = build_memory(vector_store=store)
    (mid,) = add_texts(memory, ["Caroline paints in Lisbon"])
    before = index_rows(memory)
    if failure == "store":
        store.fail_on = "delete" if op == "delete" else "upsert"
        expected: type[Exception] = VectorStoreError
    else:  # the entity links fail inside the commit transaction, after the keyword rows

        def broken(conn: Any, docs: Any) -> None:
            raise RuntimeError("injected entity index failure")

        index = memory._providers.indexes.entities
        monkeypatch.setattr(index, "upsert", broken)
        monkeypatch.setattr(index, "delete", broken)
        expected = HistoryError
    with pytest.raises(expected):
        if op == "add":
            add_texts(memory, ["Melanie paints in Porto"])
        elif op == "update":
            memory.update(mid, text="Caroline paints in Porto")
        else:
            memory.delete(mid)
    assert index_rows(memory) == before
    assert [i["id"] for i in memory.get_all(user_id="alice")["results"]] == [mid]
    assert memory.search("Porto", user_id="alice")["results"][0]["memory"] == (
        "Caroline paints in Lisbon"
    )
    monkeypatch.undo()
    if op == "delete":
        memory.delete(mid)
        assert index_rows(memory) == {"keyword": [], "entities": [], "docs": []}


FILTERS: list[dict[str, Any]] = [
    {"topic": "food"},
    {"rating": {"gte": 3}},
    {"AND": [{"topic": "food"}, {"rating": {"lt": 5}}]},
    {"OR": [{"topic": "travel"}, {"rating": 1}]},
    {"topic": {"in": ["travel", "work"]}},
    {"NOT": [{"topic": "food"}]},
]


@pytest.mark.parametrize("spec", FILTERS)
def test_search_and_get_all_apply_the_same_filters(
    build_memory: BuildMemory, spec: dict[str, Any]
) -> None:
    memory = build_memory()
    topics = ["food", "travel", "work", "food", "travel", "food", "work"]
    for i, topic in enumerate(topics):
        memory.add(
            f"Alice note {i} about {topic}",
            user_id="alice",
            infer=False,
            metadata={"topic": topic, "rating": i % 6},
        )
    add_texts(memory, ["Alice note about food from another user"], user_id="zoe")
    pages, cursor = [], None
    while True:
        page = memory.get_all(filters={"user_id": "alice", **spec}, top_k=2, cursor=cursor)
        pages.extend(i["id"] for i in page["results"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    searched = memory.search("Alice note", filters={"user_id": "alice", **spec}, top_k=50)
    assert pages and len(pages) == len(set(pages))
    assert {h["id"] for h in searched["results"]} == set(pages)
