"""Vector store mixins: filters agree with the reference evaluator; scopes are isolated."""

from __future__ import annotations

from memoweave.filters import evaluate, parse_filter
from memoweave.providers.vector_store import VectorRecord, VectorStore
from memoweave.testing.filter_cases import FILTER_CORPUS, cases_in, kit_vector
from memoweave.testing.vs_base import ids_of, list_all, record


def _load_corpus(store: VectorStore) -> None:
    store.upsert([VectorRecord(i, v, p) for i, v, p in FILTER_CORPUS])


def _check_group(store: VectorStore, group: str) -> None:
    """Run every case of ``group`` through list, count and search; report all mismatches."""
    _load_corpus(store)
    query = kit_vector("filter-query")
    problems: list[str] = []
    for case in cases_in(group):
        node = parse_filter(case.spec)
        expected = sorted(i for i, _, p in FILTER_CORPUS if evaluate(node, p))
        listed = sorted(ids_of(list_all(store, filter=node, limit=7)))
        counted = store.count(filter=node)
        searched = sorted(ids_of(store.search(query, top_k=len(FILTER_CORPUS) + 5, filter=node)))
        for method, got in (("list", listed), ("count", counted), ("search", searched)):
            want = len(expected) if method == "count" else expected
            if got != want:
                problems.append(f"{case.name} {case.spec!r}: {method} gave {got}, expected {want}")
    labels = {i: f"filter-{n:02d}" for n, (i, _, _) in enumerate(FILTER_CORPUS)}
    report = "\n".join(problems)
    for record_id, label in labels.items():
        report = report.replace(record_id, label)
    assert not problems, f"{len(problems)} filter mismatches in group {group!r}:\n{report}"


class FilterTests:
    """Every operator and nesting agrees with memoweave.filters.evaluate (50+ cases)."""

    def test_filter_equality(self, vector_store: VectorStore) -> None:
        """eq/ne on strings (CJK, quotes, backslashes), numbers and bools.

        Troubleshooting: ``True`` never equals ``1`` but ``1 == 1.0``; ``eq`` on a list field
        is false; ``ne`` is true for missing or null fields. Escape quotes and backslashes
        (or bind parameters) when rendering engine filter strings.
        """
        _check_group(vector_store, "equality")

    def test_filter_membership(self, vector_store: VectorStore) -> None:
        """in/nin, including mixed-type lists and missing fields.

        Troubleshooting: ``nin`` is true when the field is missing or null; ``in`` compares
        as ``eq`` (type families). Split mixed-type lists per type for typed engines.
        """
        _check_group(vector_store, "membership")

    def test_filter_ranges(self, vector_store: VectorStore) -> None:
        """gt/gte/lt/lte on ints and floats; bools and non-numbers never match.

        Troubleshooting: range operators are false on bools and strings even when the
        engine would coerce them; compare ints and floats numerically.
        """
        _check_group(vector_store, "range")

    def test_filter_contains(self, vector_store: VectorStore) -> None:
        """contains (substring / list element) and icontains (casefold substring).

        Troubleshooting: ``contains`` is a case-sensitive substring on strings and element
        equality on lists; ``icontains`` uses ``str.casefold`` (``"STRASSE"`` matches
        ``"Straße"``). Escape LIKE wildcards (``%``, ``_``) and backslashes; post-filter
        with the reference evaluator what the engine cannot express.
        """
        _check_group(vector_store, "contains")

    def test_filter_presence_and_nulls(self, vector_store: VectorStore) -> None:
        """exists (``"*"``) is false for missing and null fields; comparisons on null fail.

        Troubleshooting: store ``None`` values so they are distinguishable from present
        values but treated as absent by ``exists``; many engines need an explicit
        ``IS NOT NULL`` on top of "key present".
        """
        _check_group(vector_store, "presence")

    def test_filter_boolean_logic(self, vector_store: VectorStore) -> None:
        """AND/OR/NOT (NOT of a list is NOR), implicit AND and deep nesting.

        Troubleshooting: ``NOT`` negates its child exactly, so ``NOT {"x": "a"}`` matches
        records where ``x`` is missing. Engines whose NOT skips missing fields need
        ``OR(NOT x=a, x missing)``.
        """
        _check_group(vector_store, "logic")


class ScopeIsolationTests:
    """Records of one scope value never leak into another's results."""

    def test_scope_values_are_isolated(self, vector_store: VectorStore) -> None:
        """user_id alice never sees alice2, Alice, "alice " or bob records, in any method.

        Troubleshooting: filter on exact equality, never on prefix, case-insensitive or
        tokenised match (a full-text index on ``user_id`` breaks this); apply the filter
        to search, list and count alike.
        """
        users = ["alice", "alice2", "Alice", "alice ", "bob", "ali"]
        batch = [
            record(f"iso-{u}-{i}", {"user_id": u, "agent_id": "a1" if i % 2 else "a2", "i": i})
            for u in users
            for i in range(4)
        ]
        vector_store.upsert(batch)
        query = kit_vector("iso-q")
        for user in users:
            node = parse_filter({"user_id": user})
            expected = sorted(r.id for r in batch if r.payload["user_id"] == user)
            assert sorted(ids_of(list_all(vector_store, filter=node))) == expected, user
            assert vector_store.count(filter=node) == 4, user
            hits = vector_store.search(query, top_k=100, filter=node)
            assert sorted(ids_of(hits)) == expected, user
            both = parse_filter({"user_id": user, "agent_id": "a1"})
            assert {
                h.payload["user_id"] for h in vector_store.search(query, top_k=100, filter=both)
            } == {user}
            assert vector_store.count(filter=both) == 2, user

    def test_scoped_delete_and_update_leave_other_scopes_alone(
        self, vector_store: VectorStore
    ) -> None:
        """Deleting or updating alice's records does not touch bob's.

        Troubleshooting: delete and update by id only; never by a payload value that
        other scopes may share.
        """
        alice = [record(f"sc-a-{i}", {"user_id": "alice", "i": i}) for i in range(3)]
        bob = [record(f"sc-b-{i}", {"user_id": "bob", "i": i}) for i in range(3)]
        vector_store.upsert(alice + bob)
        vector_store.delete([alice[0].id])
        vector_store.update(alice[1].id, payload={"user_id": "alice", "i": 99})
        bob_filter = parse_filter({"user_id": "bob"})
        assert vector_store.count(filter=bob_filter) == 3
        assert [r.payload for r in vector_store.get([r.id for r in bob])] == [
            r.payload for r in bob
        ]
        assert vector_store.count(filter=parse_filter({"user_id": "alice"})) == 2

    def test_filters_follow_payload_changes(self, vector_store: VectorStore) -> None:
        """After update(payload=...) or a re-upsert moves a record to another scope or
        status, search, list and count (and keyword search, when claimed) see it only
        under its new values.

        Troubleshooting: when the engine keeps filterable copies of payload fields (scope
        columns, a payload index, a keyword index with its own filter fields), rewrite them
        on update and on re-upsert, not only on the first insert: ``Memory`` marks
        superseded memories through update, and a stale copy serves them as active.
        """
        text = {"memory": "The kit moved this record between scopes"}
        batch = [
            record(f"mv-{i}", {"user_id": "alice", "status": "active", **text}) for i in range(3)
        ]
        vector_store.upsert(batch)
        moved, reupserted, stays = batch
        vector_store.update(moved.id, payload={"user_id": "bob", "status": "active", **text})
        vector_store.upsert(
            [
                VectorRecord(
                    reupserted.id,
                    reupserted.vector,
                    {"user_id": "alice", "status": "superseded", **text},
                )
            ]
        )
        query = kit_vector("mv-q")
        expect = {
            ("alice", "active"): [stays.id],
            ("bob", "active"): [moved.id],
            ("alice", "superseded"): [reupserted.id],
        }
        for (user, status), ids in expect.items():
            node = parse_filter({"user_id": user, "status": status})
            where = f"user_id={user} status={status}"
            assert sorted(ids_of(vector_store.search(query, top_k=10, filter=node))) == ids, where
            assert sorted(ids_of(list_all(vector_store, filter=node))) == ids, where
            assert vector_store.count(filter=node) == len(ids), where
            if vector_store.capabilities.keyword_search:
                found = vector_store.keyword_search("scopes", top_k=10, filter=node)
                assert sorted(ids_of(found)) == ids, f"keyword search, {where}"
