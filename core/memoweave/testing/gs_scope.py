"""Graph store mixins: scope isolation, deletes that lose nothing else, lifecycle."""

from __future__ import annotations

import pytest

from memoweave.providers.graph_store import GraphEntity, GraphStore
from memoweave.testing.gs_base import (
    ALICE,
    BOB,
    GraphFactory,
    bound_graph,
    hop_map,
    mem,
    rel,
    triples,
)


class GraphScopeTests:
    """Read scopes follow the vector stores' rule; traversal never leaves them."""

    def test_scope_values_are_isolated(self, graph_store: GraphStore) -> None:
        """user_id alice never sees alice2, Alice, ali or bob items, in any method.

        Troubleshooting: compare scope properties with exact equality (no prefix, case
        folding or full-text match) in every query, on every hop.
        """
        users = ["alice", "alice2", "Alice", "ali", "bob"]
        for user in users:
            scope = {"user_id": user}
            graph_store.upsert(
                relations=[
                    rel(f"{user}-1", "x", "knows", "y", scope=scope, memory=user),
                    rel(f"{user}-2", "y", "knows", f"z-{user}", scope=scope, memory=user),
                ]
            )
        for user in users:
            scope = {"user_id": user}
            assert {dict(r.scope)["user_id"] for r in graph_store.relations(scope)} == {user}
            assert graph_store.count(scope) == 2, user
            assert {dict(e.scope)["user_id"] for e in graph_store.entities(scope)} == {user}
            hits = graph_store.neighbours(scope, ["x"], hops=3)
            assert {h.relation.destination for h in hits} == {"y", f"z-{user}"}, user

    def test_read_scope_spans_the_write_scopes_it_covers(self, graph_store: GraphStore) -> None:
        """{user_id: alice} walks across alice's runs by entity name; a run scope does not.

        Troubleshooting: match the start entities by name, not by node id, so that
        alice's run r1 and run r2 connect through "melanie"; filter each relation on the
        keys the read scope sets and only on those.
        """
        r1 = {"user_id": "alice", "run_id": "r1"}
        r2 = {"user_id": "alice", "run_id": "r2"}
        graph_store.upsert(
            relations=[
                rel("c-m", "caroline", "friend_of", "melanie", scope=r1),
                rel("m-p", "melanie", "lives_in", "paris", scope=r2),
                rel("bob", "melanie", "lives_in", "rome", scope=BOB),
            ]
        )
        assert hop_map(graph_store.neighbours(ALICE, ["caroline"], hops=2)) == {
            ("caroline", "friend_of", "melanie"): 1,
            ("melanie", "lives_in", "paris"): 2,
        }
        assert hop_map(graph_store.neighbours(r1, ["caroline"], hops=2)) == {
            ("caroline", "friend_of", "melanie"): 1
        }
        assert graph_store.count({"run_id": "r2"}) == 1

    def test_traversal_never_crosses_into_another_scope(self, graph_store: GraphStore) -> None:
        """A name both tenants use never lets alice's walk reach bob's relations.

        Troubleshooting: the scope filter belongs on every hop's relations, not only on
        the start entities.
        """
        graph_store.upsert(
            relations=[
                rel("a1", "alice", "knows", "melanie"),
                rel("b1", "melanie", "secret", "bob's diary", scope=BOB),
                rel("b2", "bob's diary", "mentions", "alice", scope=BOB),
            ]
        )
        seen = graph_store.neighbours(ALICE, ["alice", "melanie"], hops=5, include_closed=True)
        assert hop_map(seen) == {("alice", "knows", "melanie"): 1}


class GraphDeleteTests:
    """Deleting a memory removes only what it alone supported; scopes are cleared exactly."""

    def test_delete_memories_removes_only_their_relations(self, graph_store: GraphStore) -> None:
        """A triple another memory still asserts stays; orphaned entities go, others stay.

        Troubleshooting: delete edges by ``memory_id``, never by triple; afterwards remove
        only the endpoints of the deleted edges that have no edge left.
        """
        graph_store.upsert(
            entities=[GraphEntity("b", ALICE, "kept-type")],
            relations=[
                rel("m1-ab", "a", "r", "b", memory="m1"),
                rel("m1-bc", "b", "r", "c", memory="m1"),
                rel("m2-ab", "a", "r", "b", memory="m2"),
                rel("m3-de", "d", "r", "e", memory="m3"),
            ],
        )
        graph_store.delete_memories(ALICE, [mem("m1")])
        assert triples(graph_store.relations(ALICE)) == [("a", "r", "b"), ("d", "r", "e")]
        assert [r.memory_id for r in graph_store.relations(ALICE, memory_ids=[mem("m2")])] == [
            mem("m2")
        ]
        entities = {e.name: e.entity_type for e in graph_store.entities(ALICE)}
        assert entities == {"a": None, "b": "kept-type", "d": None, "e": None}
        graph_store.delete_memories(ALICE, [mem("m2"), mem("m3"), mem("missing")])
        assert graph_store.count() == 0
        assert graph_store.entities(ALICE) == []

    def test_delete_memories_respects_the_scope(self, graph_store: GraphStore) -> None:
        """delete_memories(alice, ids) never touches bob's relations, even with the same id.

        Troubleshooting: combine the memory-id condition with the scope condition.
        """
        graph_store.upsert(
            relations=[
                rel("a", "x", "r", "y", memory="shared"),
                rel("b", "x", "r", "y", scope=BOB, memory="shared"),
            ]
        )
        graph_store.delete_memories(ALICE, [mem("shared")])
        assert graph_store.count(ALICE) == 0
        assert graph_store.count(BOB) == 1
        assert len(graph_store.entities(BOB)) == 2

    def test_delete_scope_clears_exactly_that_scope(self, graph_store: GraphStore) -> None:
        """delete_scope({alice, agent a1}) removes a1's items, keeps a2's and bob's.

        Troubleshooting: delete the entities matching the scope too (DETACH DELETE), and
        filter on every key the scope sets.
        """
        a1 = {"user_id": "alice", "agent_id": "a1"}
        a2 = {"user_id": "alice", "agent_id": "a2"}
        graph_store.upsert(
            entities=[GraphEntity("lonely", a1, "thing")],
            relations=[
                rel("a1", "x", "r", "y", scope=a1),
                rel("a2", "x", "r", "y", scope=a2),
                rel("b", "x", "r", "y", scope=BOB),
            ],
        )
        graph_store.delete_scope(a1)
        assert graph_store.count(a1) == 0
        assert graph_store.entities(a1) == []
        assert graph_store.count(a2) == 1
        assert graph_store.count(BOB) == 1
        graph_store.delete_scope(ALICE)
        assert graph_store.count() == 1
        assert [dict(e.scope) for e in graph_store.entities(BOB)] == [BOB, BOB]

    def test_deleting_nothing_is_a_noop(self, graph_store: GraphStore) -> None:
        """Deleting no ids, unknown ids or an empty scope's items raises nothing.

        Troubleshooting: an empty ``IN []`` must match nothing rather than everything.
        """
        graph_store.upsert(relations=[rel("k", "a", "r", "b")])
        graph_store.delete_memories(ALICE, [])
        graph_store.delete_memories(ALICE, [mem("unknown")])
        graph_store.delete_scope({"user_id": "nobody"})
        assert graph_store.count() == 1


class GraphLifecycleTests:
    """close, reopen and drop."""

    def test_close_is_idempotent(self, graph_factory: GraphFactory, graph_name: str) -> None:
        """Closing twice raises nothing.

        Troubleshooting: guard ``close`` with a flag; do not close the engine twice.
        """
        store = bound_graph(graph_factory, graph_name)
        store.upsert(relations=[rel("c", "a", "r", "b")])
        store.close()
        store.close()

    def test_persists_across_close_and_reopen(
        self, graph_factory: GraphFactory, graph_name: str
    ) -> None:
        """With ``capabilities.persistent``, a reopened store sees everything written.

        Troubleshooting: commit each call's transaction (and checkpoint on ``close`` if the
        engine buffers), and open the same location on every factory call within a test.
        """
        store = bound_graph(graph_factory, graph_name)
        try:
            if not store.capabilities.persistent:
                pytest.skip("store does not claim capabilities.persistent")
            written = [rel(f"p{i}", "hub", "r", f"leaf é {i}", memory=f"m{i}") for i in range(4)]
            store.upsert(entities=[GraphEntity("hub", ALICE, "person")], relations=written)
            store.delete_memories(ALICE, [mem("m0")])
        finally:
            store.close()
        reopened = bound_graph(graph_factory, graph_name)
        try:
            assert reopened.relations(ALICE) == sorted(written[1:], key=lambda r: r.id)
            assert reopened.entities(ALICE, names=["hub"])[0].entity_type == "person"
            assert len(reopened.neighbours(ALICE, ["hub"])) == 3
        finally:
            reopened.close()

    def test_drop_graph_empties_it(self, graph_store: GraphStore) -> None:
        """After drop_graph the graph is empty, still bound and usable.

        Troubleshooting: delete every node and edge of the bound graph (or drop and
        recreate its tables) and keep the binding.
        """
        graph_store.upsert(relations=[rel(f"d{i}", "a", "r", f"b{i}") for i in range(5)])
        graph_store.drop_graph()
        assert graph_store.count() == 0
        assert graph_store.entities(ALICE) == []
        graph_store.upsert(relations=[rel("after", "a", "r", "b")])
        assert graph_store.count() == 1
