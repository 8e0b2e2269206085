"""A configured graph store is bound on first use, cleared by delete_all and reset, and
closed with the Memory."""

from __future__ import annotations

from typing import Any

import pytest

from memoweave.errors import ValidationError
from memoweave.providers.graph_checks import GRAPH_NAME, graph_name_for
from memoweave.providers.graph_store import GraphRelation
from memoweave.stores.graph_memory import InMemoryGraphStore

from .conftest import MakeMemory


def _relation(label: str, user: str) -> GraphRelation:
    return GraphRelation(label, {"user_id": user}, "a", "knows", "b", f"memory-{label}")


class ClosingGraph(InMemoryGraphStore):
    closed = 0

    def close(self) -> None:
        type(self).closed += 1


def test_configured_graph_is_bound_and_cleared(make_memory: MakeMemory) -> None:
    memory = make_memory({"graph_store": {"provider": "memory"}, "collection_name": "my-notes"})
    graph = memory._providers.graph_store
    assert isinstance(graph, InMemoryGraphStore)
    memory.get_all(user_id="alice")  # first use binds the graph
    graph.upsert(relations=[_relation("r1", "alice"), _relation("r2", "bob")])
    memory.delete_all(user_id="alice")
    assert graph.count({"user_id": "alice"}) == 0
    assert graph.count({"user_id": "bob"}) == 1
    memory.reset()
    assert graph.count() == 0


def test_graph_store_instance_and_bad_instance(make_memory: MakeMemory) -> None:
    ClosingGraph.closed = 0
    graph = ClosingGraph()
    memory = make_memory(graph_store=graph)
    memory.close()
    memory.close()
    assert ClosingGraph.closed == 1
    with pytest.raises(ValidationError, match="graph_store"):
        make_memory(graph_store=object())


@pytest.mark.parametrize("name", ["memoweave", "my-notes", "1st", "a b/c|d", "x" * 200])
def test_graph_names_follow_collection_names(name: str) -> None:
    derived = graph_name_for(name)
    assert GRAPH_NAME.fullmatch(derived)
    assert (derived == name) == bool(GRAPH_NAME.fullmatch(name))


def test_distinct_collections_get_distinct_graphs() -> None:
    names: list[Any] = ["my-notes", "my_notes", "my notes", "my.notes"]
    assert len({graph_name_for(n) for n in names}) == len(names)
