"""With a graph store, search returns ``relations`` beside ``results`` and the graph signal
joins the fusion: it finds memories linked to the neighbours of the query's entities,
shows in ``explain``, and never crosses the read filter."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memoweave.memory import Memory
from memoweave.providers.graph_store import GraphHit, GraphRelation
from memoweave.retrieval.graph import graph_scores
from memoweave.stores.graph_memory import InMemoryGraphStore
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    memory = Memory(
        {"history_db_path": str(tmp_path / "h.db"), "graph_store": {"provider": "memory"}},
        embedder=HashingEmbedder(dims=64),
        vector_store=InMemoryVectorStore(),
    )
    yield memory
    memory.close()


def _add(mem: Memory, text: str, user: str = "alice", **kw: object) -> str:
    return mem.add(text, user_id=user, infer=False, **kw)["results"][0]["id"]  # type: ignore[arg-type]


def test_relations_come_back_beside_results(mem: Memory) -> None:
    linked = _add(mem, "Caroline went hiking with Melanie.")
    _add(mem, "Bob went hiking with Melanie.", user="bob")
    out = mem.search("What does Caroline do?", user_id="alice")
    assert {"results", "relations"} <= set(out)
    assert out["relations"] == [
        {
            "source": "caroline",
            "relationship": "co_mentioned",
            "destination": "melanie",
            "hop": 1,
            "memory_ids": [linked],
        }
    ]


def test_a_two_hop_memory_is_found_and_explained(mem: Memory) -> None:
    _add(mem, "Caroline introduced Melanie to the Zebra Club.")
    far = _add(mem, "Weekly meetings of the Zebra Club are on Tuesdays in Brooklyn.")
    _add(mem, "The weather was lovely yesterday afternoon.")
    out = mem.search("Where does Caroline go?", user_id="alice", explain=True, top_k=5)
    by_id = {r["id"]: r for r in out["results"]}
    assert far in by_id, "the hop-2 memory should be a candidate"
    graph = by_id[far]["explain"]["graph"]
    assert graph["score"] > 0 and graph["contribution"] > 0
    assert any(r["hop"] == 2 for r in out["relations"])


def test_the_graph_signal_respects_the_read_filter(mem: Memory) -> None:
    _add(mem, "Caroline met Melanie at the Zebra Club.", metadata={"topic": "social"})
    hidden = _add(mem, "The Zebra Club closes in winter.", metadata={"topic": "secret"})
    expired = _add(mem, "The Zebra Club moved to Queens.", expiration_date="2001-01-01T00:00:00Z")
    out = mem.search("Caroline", user_id="alice", filters={"topic": {"ne": "secret"}}, top_k=10)
    ids = {r["id"] for r in out["results"]}
    assert hidden not in ids and expired not in ids
    supporting = {i for r in out["relations"] for i in r["memory_ids"]}
    assert hidden not in supporting and expired not in supporting


def test_no_graph_store_means_no_relations_key(tmp_path: Path) -> None:
    with Memory(
        {"history_db_path": str(tmp_path / "h.db")},
        embedder=HashingEmbedder(dims=64),
        vector_store=InMemoryVectorStore(),
    ) as memory:
        memory.add("Caroline met Melanie.", user_id="alice", infer=False)
        assert "relations" not in memory.search("Caroline", user_id="alice")


def test_scores_damp_hubs_and_far_hops() -> None:
    def hit(rid: str, s: str, d: str, memory: str, hop: int) -> GraphHit:
        scope = {"user_id": "alice"}
        return GraphHit(GraphRelation(rid, scope, s, "r", d, memory), hop)

    hits = (
        hit("1", "caroline", "melanie", "rare", 1),
        hit("2", "speaker", "x", "hub-a", 1),
        hit("3", "speaker", "y", "hub-b", 1),
        hit("4", "speaker", "z", "hub-c", 1),
        hit("5", "speaker", "w", "hub-d", 1),
        hit("6", "melanie", "club", "far", 2),
    )
    scores = graph_scores(("caroline", "speaker"), hits)
    assert scores["rare"] == 1.0
    assert scores["hub-a"] == pytest.approx(0.5)
    assert scores["far"] == pytest.approx(0.5)


def test_graph_store_without_entities_in_the_query(mem: Memory) -> None:
    _add(mem, "Caroline met Melanie.")
    out = mem.search("what happened?", user_id="alice")
    assert out["relations"] == []
    assert isinstance(mem._providers.graph_store, InMemoryGraphStore)
