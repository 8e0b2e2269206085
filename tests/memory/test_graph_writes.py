"""Relations follow the memories inside the journaled write: added with new memories,
closed (never deleted) when a memory is superseded, rewritten or soft-deleted, removed
only when no memory supports them, and restored when a write fails or crashes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from memoweave.errors import GraphStoreError, HistoryError
from memoweave.memory import Memory
from memoweave.memory.actions import AddMemory
from memoweave.memory.clock import utcnow
from memoweave.memory.history import HistoryStore
from memoweave.memory.scope import Scope
from memoweave.memory.write_plan import WriteContext
from memoweave.providers.graph_store import GraphEntity, GraphRelation
from memoweave.runtime.steps import run
from memoweave.stores.graph_memory import InMemoryGraphStore
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder, ScriptedLLM

from .conftest import MakeMemory

ALICE = {"user_id": "alice"}


class FlakyGraph(InMemoryGraphStore):
    """The reference graph store, told to fail its next write on demand."""

    fail_next = False

    def _maybe_fail(self) -> None:
        if self.fail_next:
            self.fail_next = False
            raise GraphStoreError("injected graph failure")

    def upsert(
        self, *, entities: Sequence[GraphEntity] = (), relations: Sequence[GraphRelation] = ()
    ) -> None:
        self._maybe_fail()
        super().upsert(entities=entities, relations=relations)

    def delete_memories(self, scope: Any, memory_ids: Sequence[str]) -> None:
        self._maybe_fail()
        super().delete_memories(scope, memory_ids)


def state(graph: InMemoryGraphStore) -> list[tuple[Any, ...]]:
    return sorted(
        (r.triple(), r.memory_id, r.valid_until is None, r.superseded_by)
        for r in graph.relations(ALICE)
    )


@pytest.fixture
def graph() -> FlakyGraph:
    return FlakyGraph()


@pytest.fixture
def mem(make_memory: MakeMemory, graph: FlakyGraph) -> Memory:
    return make_memory(graph_store=graph)


def test_a_verbatim_turn_links_its_speaker_and_entities(mem: Memory, graph: FlakyGraph) -> None:
    added = mem.add(
        [{"role": "user", "name": "Caroline", "content": "Melanie took me to the LGBTQ center."}],
        user_id="alice",
        infer=False,
        observed_at="2023-05-08T10:00:00Z",
    )["results"]
    [memory_id] = [r["id"] for r in added]
    relations = graph.relations(ALICE)
    assert sorted(r.triple() for r in relations) == [
        ("caroline", "mentions", "lgbtq"),
        ("caroline", "mentions", "melanie"),
        ("melanie", "co_mentioned", "lgbtq"),
    ]
    assert {r.memory_id for r in relations} == {memory_id}
    assert {r.valid_from for r in relations} == {1683540000.0}


def test_a_superseding_fact_closes_the_old_relation(
    make_memory: MakeMemory, graph: FlakyGraph
) -> None:
    llm = ScriptedLLM()
    mem = make_memory(graph_store=graph, llm=llm)
    llm.push({"memories": [{"text": "Alice lives in Berlin"}]})
    old = mem.add("I live in Berlin.", user_id="alice")["results"][0]["id"]
    llm.push({"memories": [{"text": "Alice lives in Paris", "replaces": [1]}]})
    new = mem.add("I moved to Paris.", user_id="alice")["results"][0]["id"]
    by_memory = {r.memory_id: r for r in graph.relations(ALICE)}
    closed, successor = by_memory[old], by_memory[new]
    assert closed.triple() == ("alice", "co_mentioned", "berlin")
    assert closed.valid_until is not None and closed.superseded_by == successor.id
    assert successor.triple() == ("alice", "co_mentioned", "paris") and successor.is_open
    assert [h.relation.destination for h in graph.neighbours(ALICE, ["alice"])] == ["paris"]


def test_delete_removes_only_what_the_memory_alone_supported(
    mem: Memory, graph: FlakyGraph
) -> None:
    first = mem.add("Caroline met Melanie in Boston.", user_id="alice", infer=False)
    second = mem.add("Caroline and Melanie went hiking.", user_id="alice", infer=False)
    first_id, second_id = first["results"][0]["id"], second["results"][0]["id"]
    mem.add("Bob met Melanie in Boston.", user_id="bob", infer=False)
    mem.delete(first_id)
    triples = {r.triple() for r in graph.relations(ALICE)}
    assert ("caroline", "co_mentioned", "melanie") in triples  # still asserted by the second
    assert not any("boston" in t for t in triples)
    assert {e.name for e in graph.entities(ALICE)} == {"caroline", "melanie"}
    mem.delete(second_id)
    assert graph.count(ALICE) == 0 and graph.entities(ALICE) == []
    assert graph.count({"user_id": "bob"}) == 3


def test_rewriting_a_memory_closes_what_it_no_longer_says(mem: Memory, graph: FlakyGraph) -> None:
    memory_id = mem.add("Caroline visited Boston with Melanie.", user_id="alice", infer=False)[
        "results"
    ][0]["id"]
    mem.update(memory_id, "Caroline visited Denver with Melanie.")
    open_now = {r.triple() for r in graph.relations(ALICE) if r.is_open}
    closed = {r.triple() for r in graph.relations(ALICE) if not r.is_open}
    assert ("caroline", "co_mentioned", "melanie") in open_now
    assert ("caroline", "co_mentioned", "denver") in open_now
    assert ("caroline", "co_mentioned", "boston") in closed
    assert all(r.memory_id == memory_id for r in graph.relations(ALICE))
    before = state(graph)
    mem.update(memory_id, metadata={"topic": "travel"})  # same text: the graph is untouched
    assert state(graph) == before


def test_delete_all_and_reset_clear_the_graph(mem: Memory, graph: FlakyGraph) -> None:
    mem.add("Caroline met Melanie.", user_id="alice", infer=False)
    mem.add("Bob met Dana.", user_id="bob", infer=False)
    mem.delete_all(user_id="alice")
    assert graph.count(ALICE) == 0 and graph.count({"user_id": "bob"}) == 1
    mem.reset()
    assert graph.count() == 0


def test_a_failed_graph_write_changes_nothing(mem: Memory, graph: FlakyGraph) -> None:
    kept = mem.add("Caroline met Melanie.", user_id="alice", infer=False)["results"][0]["id"]
    before = state(graph)
    graph.fail_next = True
    with pytest.raises(GraphStoreError):
        mem.add("Caroline adopted Luna.", user_id="alice", infer=False)
    assert [m["id"] for m in mem.get_all(user_id="alice")["results"]] == [kept]
    assert state(graph) == before
    graph.fail_next = True
    with pytest.raises(GraphStoreError):
        mem.delete(kept)
    assert mem.get(kept) is not None and state(graph) == before


def test_a_failed_commit_restores_the_graph(
    mem: Memory, graph: FlakyGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = mem.add("Caroline met Melanie.", user_id="alice", infer=False)["results"][0]["id"]
    before = state(graph)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(HistoryStore, "commit", broken)
    with pytest.raises(HistoryError):
        mem.delete(kept)
    assert state(graph) == before
    monkeypatch.undo()
    assert mem.get(kept) is not None


def test_recovery_after_a_crash_restores_the_graph(
    make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    graph = FlakyGraph()
    config = {"history_db_path": str(tmp_path / "crash.db")}
    mem = make_memory(config, graph_store=graph)
    kept = mem.add("Caroline met Melanie.", user_id="alice", infer=False)["results"][0]["id"]
    before = state(graph)

    class Crash(BaseException):
        pass

    def die(*args: Any, **kwargs: Any) -> None:
        raise Crash  # the process dies after the graph write, before the commit

    monkeypatch.setattr(HistoryStore, "commit", die)
    with pytest.raises(Crash):
        mem.add("Caroline adopted Luna in Denver.", user_id="alice", infer=False)
    monkeypatch.undo()
    assert state(graph) != before
    mem._providers.history.close()  # the "process" is gone; reopen on the same files
    reopened = make_memory(config, graph_store=graph, vector_store=mem._providers.vector_store)
    reopened.get_all(user_id="alice")  # opening runs the recovery
    assert state(graph) == before
    assert [m["id"] for m in reopened.get_all(user_id="alice")["results"]] == [kept]


def test_strategy_triples_replace_the_offline_links(tmp_path: Any) -> None:
    graph = FlakyGraph()
    config = {"history_db_path": str(tmp_path / "t.db")}
    with Memory(
        config, embedder=HashingEmbedder(), vector_store=InMemoryVectorStore(), graph_store=graph
    ) as mem:
        actions = [
            AddMemory("Caroline adopted Max.", relations=(("Caroline", "Adopted", "Max"),)),
            AddMemory("Nothing to link for Melanie here.", relations=()),
        ]
        ctx = WriteContext(scope=Scope(user_id="alice"), now=utcnow(), observed_at=utcnow())
        run(mem._ops.ensure_ready())
        run(mem._ops.writer.write("alice", actions, ctx))
        assert [r.triple() for r in graph.relations(ALICE)] == [("caroline", "adopted", "max")]


def test_the_additive_call_also_returns_the_relations(
    make_memory: MakeMemory, graph: FlakyGraph
) -> None:
    llm = ScriptedLLM()
    mem = make_memory(graph_store=graph, llm=llm)
    llm.push(
        {
            "memories": [
                {
                    "text": "Caroline adopted a dog named Max",
                    "replaces": [],
                    "sources": [1],
                    "relations": [
                        {"source": "Caroline", "relation": "Adopted", "target": "Max"},
                        {"source": "Max", "relation": "is a", "target": "Max"},
                    ],
                },
                {"text": "Caroline likes quiet mornings", "sources": [1], "relations": []},
            ]
        }
    )
    mem.add("I adopted a dog, Max! I like quiet mornings.", user_id="alice")
    assert len(llm.calls) == 1, "relations come from the same single LLM call"
    assert '"relations"' in str(llm.calls[0].messages[0]["content"])
    assert [r.triple() for r in graph.relations(ALICE)] == [("caroline", "adopted", "max")]


def test_without_a_graph_the_prompt_does_not_ask_for_relations(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM()
    mem = make_memory(llm=llm)
    llm.push({"memories": [{"text": "Caroline adopted Max"}]})
    mem.add("I adopted Max.", user_id="alice")
    assert '"relations"' not in str(llm.calls[0].messages[0]["content"])
