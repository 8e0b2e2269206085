"""Graph store mixins: binding, writing and reading back entities and relations."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from memoweave.errors import GraphStoreError
from memoweave.providers.graph_store import GraphEntity, GraphRelation, GraphStore
from memoweave.testing.gs_base import ALICE, BOB, GraphFactory, new_graph_store, rel, triples

#: Names and ids a store must bind as parameters (quotes, backslashes, Cypher, separators).
HOSTILE = (
    'o\'brien "quoted" back\\slash',
    "x'}) DETACH DELETE n //",
    "a|agent_id=b",
    "日本語 🎉 العربية",
    "$param {brace} `tick`",
)


class GraphBindingTests:
    """``ensure_graph`` binds, reopens and separates graphs."""

    def test_new_graph_is_empty(self, graph_store: GraphStore) -> None:
        """count is 0; relations, entities and neighbours find nothing.

        Troubleshooting: the factory must give every test a fresh location (``tmp_path``)
        or the graph name must separate the data (the kit uses ``kit_<10 hex>``).
        """
        assert graph_store.count() == 0
        assert graph_store.relations(ALICE) == []
        assert graph_store.entities(ALICE) == []
        assert graph_store.neighbours(ALICE, ["anyone"], hops=2) == []

    def test_calls_before_ensure_graph_raise(self, graph_factory: GraphFactory) -> None:
        """An unbound store raises GraphStoreError from upsert, neighbours, count, relations.

        Troubleshooting: keep the bound graph in an attribute set only by ``ensure_graph``
        and check it first in every method; raise ``GraphStoreError``, not AttributeError.
        """
        store = new_graph_store(graph_factory)
        try:
            with pytest.raises(GraphStoreError):
                store.upsert(relations=[rel("a", "a", "knows", "b")])
            with pytest.raises(GraphStoreError):
                store.neighbours(ALICE, ["a"])
            with pytest.raises(GraphStoreError):
                store.count()
            with pytest.raises(GraphStoreError):
                store.relations(ALICE)
        finally:
            store.close()

    def test_ensure_graph_is_idempotent_and_graphs_are_separate(
        self, graph_store: GraphStore, graph_name: str
    ) -> None:
        """Re-binding keeps the data; another graph name starts empty and stays apart.

        Troubleshooting: ``ensure_graph`` must open an existing graph, not recreate it;
        prefix tables, labels or keys with the graph name so two graphs never mix.
        """
        graph_store.upsert(relations=[rel("g1", "a", "knows", "b")])
        graph_store.ensure_graph(graph_name)
        assert graph_store.count() == 1
        graph_store.ensure_graph(graph_name + "_other")
        assert graph_store.count() == 0
        graph_store.upsert(relations=[rel("g2", "c", "knows", "d")])
        graph_store.ensure_graph(graph_name)
        assert triples(graph_store.relations(ALICE)) == [("a", "knows", "b")]

    def test_graph_names_are_validated(self, graph_factory: GraphFactory) -> None:
        """Names outside ``[A-Za-z][A-Za-z0-9_]*`` (<= 48 chars) raise GraphStoreError.

        Troubleshooting: call ``memoweave.providers.graph_checks.check_graph_name`` first;
        graph names become table or key prefixes and must never carry query syntax.
        """
        store = new_graph_store(graph_factory)
        try:
            for bad in ("", "1abc", "a-b", "a b", "x" * 49, "g`) DROP"):
                with pytest.raises(GraphStoreError):
                    store.ensure_graph(bad)
        finally:
            store.close()


class GraphWriteTests:
    """upsert validates first, is idempotent, replaces by key, and round-trips values."""

    def test_upsert_then_read_round_trips(self, graph_store: GraphStore) -> None:
        """Every field of a relation comes back equal; endpoints become entities.

        Troubleshooting: store timestamps as doubles (``valid_from=1.5`` comes back
        ``1.5``), keep ``None`` as null, and store the scope keys as separate properties;
        endpoints missing from the graph are created in the relation's scope.
        """
        written = rel(
            "rt",
            "caroline",
            "moved_to",
            "new york 漢字",
            scope={"user_id": "alice", "agent_id": "planner", "run_id": "r1"},
            valid_from=1_700_000_000.25,
            valid_until=1_800_000_000.5,
            superseded_by="successor-id",
        )
        graph_store.upsert(relations=[written])
        [got] = graph_store.relations(ALICE)
        assert got == written
        assert isinstance(got.valid_from, float)
        names = [(e.name, dict(e.scope), e.entity_type) for e in graph_store.entities(ALICE)]
        assert names == [
            ("caroline", dict(written.scope), None),
            ("new york 漢字", dict(written.scope), None),
        ]

    def test_upsert_is_idempotent(self, graph_store: GraphStore) -> None:
        """Upserting the same relations and entities twice stores one copy of each.

        Troubleshooting: MERGE on the relation id (not on the triple) and on the entity's
        (scope, name) key; CREATE makes duplicates.
        """
        batch = [rel(f"idem-{i}", "hub", "knows", f"n{i}") for i in range(5)]
        entity = GraphEntity("hub", ALICE, "person")
        graph_store.upsert(entities=[entity], relations=batch)
        graph_store.upsert(entities=[entity], relations=batch)
        assert graph_store.count() == 5
        assert len(graph_store.entities(ALICE)) == 6

    def test_upsert_replaces_a_relation_by_id(self, graph_store: GraphStore) -> None:
        """A second upsert of an id replaces every field: closing a relation is an upsert.

        Troubleshooting: SET every property on the matched edge, including ``valid_until``
        and ``superseded_by`` going from null to a value and back; if the endpoints change,
        move the edge (delete and recreate it) rather than keeping the old one.
        """
        first = rel("rep", "alice", "lives_in", "berlin", valid_from=10.0)
        graph_store.upsert(relations=[first])
        closed = dataclasses.replace(first, valid_until=20.0, superseded_by="next")
        graph_store.upsert(relations=[closed])
        assert graph_store.relations(ALICE) == [closed]
        assert graph_store.count(include_closed=False) == 0
        moved = dataclasses.replace(first, destination="paris")
        graph_store.upsert(relations=[moved])
        assert graph_store.relations(ALICE) == [moved]
        assert graph_store.count() == 1

    def test_entity_types_are_set_and_kept(self, graph_store: GraphStore) -> None:
        """An entity's type is replaced by an entity upsert, never cleared by a relation.

        Troubleshooting: create relation endpoints with MERGE ... ON CREATE (or an
        existence check), not with a SET of ``entity_type = null``.
        """
        graph_store.upsert(entities=[GraphEntity("melanie", ALICE, "person")])
        graph_store.upsert(relations=[rel("t1", "melanie", "paints", "sunsets")])
        types = {e.name: e.entity_type for e in graph_store.entities(ALICE)}
        assert types == {"melanie": "person", "sunsets": None}
        graph_store.upsert(entities=[GraphEntity("melanie", ALICE, "artist")])
        [got] = graph_store.entities(ALICE, names=["melanie"])
        assert got.entity_type == "artist"

    def test_same_name_in_two_scopes_is_two_entities(self, graph_store: GraphStore) -> None:
        """alice's and bob's "paris" are distinct entities with their own types.

        Troubleshooting: key entities by (write scope, name), e.g. with
        ``graph_checks.entity_key``; a key on the name alone shares nodes across tenants.
        """
        graph_store.upsert(
            entities=[GraphEntity("paris", ALICE, "city"), GraphEntity("paris", BOB, "person")],
            relations=[rel("s1", "alice", "visited", "paris")],
        )
        for scope, kind in ((ALICE, "city"), (BOB, "person")):
            found = graph_store.entities(scope, names=["paris"])
            assert [(dict(e.scope), e.entity_type) for e in found] == [(scope, kind)]

    def test_invalid_input_is_rejected_and_writes_nothing(self, graph_store: GraphStore) -> None:
        """A batch with one bad item raises GraphStoreError and leaves the graph unchanged.

        Troubleshooting: validate the whole call with
        ``memoweave.providers.graph_checks.check_write`` before the first write, and write
        one call in one engine transaction.
        """
        good = rel("ok", "a", "knows", "b")
        bad_items: dict[str, object] = {
            "empty source": rel("bad1", "", "knows", "b"),
            "nan valid_from": rel("bad2", "a", "knows", "b", valid_from=float("nan")),
            "valid_until < valid_from": rel("bad3", "a", "r", "b", valid_from=5.0, valid_until=1.0),
            "unknown scope key": dataclasses.replace(good, scope={"tenant": "x"}),
            "empty scope": dataclasses.replace(good, scope={}),
            "empty id": dataclasses.replace(good, id=""),
            "empty relationship": rel("bad4", "a", "", "b"),
            "control character": rel("bad5", "a\nb", "knows", "c"),
            "a tuple": ("a", "knows", "b"),
            "duplicate id in the call": good,
        }
        accepted = []
        for label, bad in bad_items.items():
            try:
                graph_store.upsert(relations=[good, bad])  # type: ignore[list-item]  # bad: the point
            except GraphStoreError:
                pass
            else:
                accepted.append(label)
        refused: list[Callable[[], object]] = [
            lambda: graph_store.upsert(relations=[good], entities=[GraphEntity("", ALICE)]),
            lambda: graph_store.upsert(relations="a knows b"),  # type: ignore[arg-type]  # the point
        ]
        for call in refused:
            with pytest.raises(GraphStoreError):
                call()
        written = graph_store.count()
        assert written == 0, f"rejected calls wrote {written} relations (count should be 0)"
        assert graph_store.entities(ALICE) == []
        assert not accepted, f"invalid items accepted: {accepted}"

    def test_returned_objects_do_not_alias_stored_state(self, graph_store: GraphStore) -> None:
        """Mutating a returned relation's or entity's scope dict does not change the store.

        Troubleshooting: build a new dict for every scope you return; never hand out the
        mapping you keep.
        """
        scope = {"user_id": "alice"}
        graph_store.upsert(
            relations=[dataclasses.replace(rel("al", "a", "knows", "b"), scope=scope)]
        )
        scope["user_id"] = "mallory"  # the caller's dict changes after the call
        returned: list[GraphRelation | GraphEntity] = [
            *graph_store.relations(ALICE),
            *graph_store.entities(ALICE),
            *(h.relation for h in graph_store.neighbours(ALICE, ["a"])),
        ]
        assert len(returned) == 4
        for item in returned:
            item.scope["user_id"] = "mallory"  # type: ignore[index]  # read-only: the point
        aliased = "mutating a returned scope changed the store"
        assert [dict(r.scope) for r in graph_store.relations(ALICE)] == [ALICE], aliased
        assert [dict(e.scope) for e in graph_store.entities(ALICE)] == [ALICE, ALICE], aliased
        assert graph_store.relations({"user_id": "mallory"}) == [], aliased

    def test_hostile_values_are_bound_not_spliced(self, graph_store: GraphStore) -> None:
        """Quotes, backslashes, Cypher fragments and separators round-trip and stay scoped.

        Troubleshooting: pass every value as a bound query parameter; never format it into
        the query text. Build composite keys unambiguously (``a|agent_id=b`` as a user id
        is not the scope ``{user_id: a, agent_id: b}``).
        """
        for i, text in enumerate(HOSTILE):
            scope = {"user_id": text}
            graph_store.upsert(
                entities=[GraphEntity(text, scope, "kind")],
                relations=[rel(f"h{i}", text, "knows", f"{text} 2", scope=scope)],
            )
        graph_store.upsert(
            relations=[rel("sep", "a", "knows", "b", scope={"user_id": "a", "agent_id": "b"})]
        )
        assert graph_store.count() == len(HOSTILE) + 1
        for text in HOSTILE:
            scope = {"user_id": text}
            assert triples(graph_store.relations(scope)) == [(text, "knows", f"{text} 2")]
            hits = graph_store.neighbours(scope, [text])
            assert [h.relation.destination for h in hits] == [f"{text} 2"]
            assert graph_store.entities(scope, names=[text])[0].entity_type == "kind"

    def test_batch_upsert_of_500_relations(self, graph_store: GraphStore) -> None:
        """One upsert of 500 relations stores all; a hub's neighbours return them all.

        Troubleshooting: write a batch in one transaction (UNWIND a list parameter);
        one round trip per relation makes this slow on server engines.
        """
        batch = [rel(f"b{i}", "hub", "links", f"leaf {i}", memory=f"m{i % 7}") for i in range(500)]
        graph_store.upsert(relations=batch)
        assert graph_store.count(ALICE) == 500
        hits = graph_store.neighbours(ALICE, ["hub"], limit=1000)
        assert len(hits) == 500
        assert {h.hop for h in hits} == {1}
        assert len(graph_store.relations(ALICE, memory_ids=[batch[0].memory_id])) == 72
