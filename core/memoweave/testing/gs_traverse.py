"""Graph store mixins: ``neighbours`` (breadth-first, both directions, open relations)."""

from __future__ import annotations

import pytest

from memoweave.errors import GraphStoreError
from memoweave.providers.graph_store import GraphStore
from memoweave.testing.gs_base import ALICE, hop_map, rel


class TraversalTests:
    """Hops, direction, ordering, limits and closed relations."""

    def test_one_hop_follows_both_directions(self, graph_store: GraphStore) -> None:
        """Hop 1 is every relation touching a start entity, as source or destination.

        Troubleshooting: match the edge undirected (``(a)-[r]-(b)``), or run the outgoing
        and incoming queries and merge them.
        """
        graph_store.upsert(
            relations=[
                rel("ab", "a", "knows", "b"),
                rel("ca", "c", "likes", "a"),
                rel("bd", "b", "knows", "d"),
            ]
        )
        assert hop_map(graph_store.neighbours(ALICE, ["a"])) == {
            ("a", "knows", "b"): 1,
            ("c", "likes", "a"): 1,
        }

    def test_multi_hop_reports_each_relation_once_at_its_smallest_hop(
        self, graph_store: GraphStore
    ) -> None:
        """A chain is walked hop by hop; a cycle returns each relation once.

        Troubleshooting: keep a set of relations already returned and of entities already
        expanded; the hop of a relation is the step at which it was first reached.
        """
        graph_store.upsert(
            relations=[
                rel("ab", "a", "r", "b"),
                rel("bc", "b", "r", "c"),
                rel("cd", "c", "r", "d"),
                rel("ca", "c", "r", "a"),
            ]
        )
        assert hop_map(graph_store.neighbours(ALICE, ["a"], hops=1)) == {
            ("a", "r", "b"): 1,
            ("c", "r", "a"): 1,
        }
        assert hop_map(graph_store.neighbours(ALICE, ["a"], hops=2)) == {
            ("a", "r", "b"): 1,
            ("c", "r", "a"): 1,
            ("b", "r", "c"): 2,
            ("c", "r", "d"): 2,
        }
        assert hop_map(graph_store.neighbours(ALICE, ["d"], hops=3)) == {
            ("c", "r", "d"): 1,
            ("b", "r", "c"): 2,
            ("c", "r", "a"): 2,
            ("a", "r", "b"): 3,
        }

    def test_results_are_ordered_by_hop_then_id_and_limited(self, graph_store: GraphStore) -> None:
        """Hits come by hop, then relation id; ``limit`` keeps the first ones.

        Troubleshooting: sort the whole result before cutting; a LIMIT inside each hop's
        query drops nearer relations in favour of farther ones.
        """
        batch = [rel(f"o{i}", "hub", "r", f"leaf{i}") for i in range(6)]
        batch += [rel(f"f{i}", f"leaf{i}", "r", f"far{i}") for i in range(6)]
        graph_store.upsert(relations=batch)
        hits = graph_store.neighbours(ALICE, ["hub"], hops=2)
        keys = [(h.hop, h.relation.id) for h in hits]
        assert keys == sorted(keys)
        assert [h.hop for h in hits] == [1] * 6 + [2] * 6
        limited = graph_store.neighbours(ALICE, ["hub"], hops=2, limit=8)
        assert [(h.hop, h.relation.id) for h in limited] == keys[:8]

    def test_closed_relations_are_skipped_unless_asked(self, graph_store: GraphStore) -> None:
        """A closed relation is neither returned nor followed; include_closed shows it.

        Troubleshooting: filter ``valid_until IS NULL`` on every hop, not only the first,
        and do not expand entities reached only through a closed relation.
        """
        graph_store.upsert(
            relations=[
                rel("old", "alice", "lives_in", "berlin", valid_until=5.0, superseded_by="x"),
                rel("new", "alice", "lives_in", "paris", valid_from=5.0),
                rel("far", "berlin", "in", "germany"),
            ]
        )
        assert hop_map(graph_store.neighbours(ALICE, ["alice"], hops=2)) == {
            ("alice", "lives_in", "paris"): 1
        }
        assert hop_map(graph_store.neighbours(ALICE, ["alice"], hops=2, include_closed=True)) == {
            ("alice", "lives_in", "paris"): 1,
            ("alice", "lives_in", "berlin"): 1,
            ("berlin", "in", "germany"): 2,
        }

    def test_unknown_and_empty_start_sets_find_nothing(self, graph_store: GraphStore) -> None:
        """No start entity, or only unknown ones, returns an empty list.

        Troubleshooting: an empty ``IN []`` list must not turn into "no filter".
        """
        graph_store.upsert(relations=[rel("ab", "a", "r", "b")])
        assert graph_store.neighbours(ALICE, []) == []
        assert graph_store.neighbours(ALICE, ["nobody"], hops=3) == []
        assert len(graph_store.neighbours(ALICE, ["nobody", "b"])) == 1

    def test_arguments_are_validated(self, graph_store: GraphStore) -> None:
        """hops/limit out of range or not ints, a bare string of names, a bad scope raise.

        Troubleshooting: call ``graph_checks.check_bounds``, ``check_names`` and
        ``check_scope`` before querying; a bare ``"abc"`` iterates as three names.
        """
        for kwargs in ({"hops": 0}, {"hops": 6}, {"hops": True}, {"limit": 0}, {"limit": 1.5}):
            with pytest.raises(GraphStoreError):
                graph_store.neighbours(ALICE, ["a"], **kwargs)
        with pytest.raises(GraphStoreError):
            graph_store.neighbours(ALICE, "abc")
        for scope in ({}, {"user_id": ""}, {"tenant": "x"}, "alice"):
            with pytest.raises(GraphStoreError):
                graph_store.neighbours(scope, ["a"])  # type: ignore[arg-type]  # bad: the point
