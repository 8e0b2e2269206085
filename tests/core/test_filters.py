"""The filter language: parsing, validation errors, rendering and the reference evaluator."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from memoweave.errors import FilterError
from memoweave.filters import (
    OPERATORS,
    And,
    Comparison,
    Not,
    Or,
    compile_filter,
    conjoin,
    evaluate,
    parse_filter,
    scope_filter,
    to_dict,
)

PAYLOADS: dict[str, dict[str, Any]] = {
    "A": {
        "user_id": "alice",
        "age": 30,
        "score": 1.5,
        "active": True,
        "tags": ["food", "travel"],
        "note": "Loves Pizza in der Straße",
        "one": 1,
    },
    "B": {
        "user_id": "bob",
        "age": 65.0,
        "score": None,
        "active": False,
        "tags": [],
        "note": "雪の日に東京へ行く",
        "one": 1.0,
        "cjk": "北京",
    },
    "C": {
        "user_id": 'o\'brien "q"',
        "path": "C:\\Users\\x",
        "tags": ['say "hi"', "back\\slash", 1, True],
        "age": "30",
        "one": True,
        "active": 1,
    },
    "D": {},
    "E": {"user_id": None, "age": True, "tags": "food,travel", "nested": {"a": 1}, "score": 0},
}
ALL = "ABCDE"

# (spec, names of the PAYLOADS it matches)
VALID: list[tuple[dict[str, Any], str]] = [
    ({"user_id": "alice"}, "A"),
    ({"user_id": {"eq": "alice"}}, "A"),
    ({"user_id": {"ne": "alice"}}, "BCDE"),
    ({"user_id": "*"}, "ABC"),
    ({"user_id": {"exists": False}}, "DE"),
    ({"user_id": {"exists": True}}, "ABC"),
    ({"age": 30}, "A"),
    ({"age": 65}, "B"),
    ({"age": 30.0}, "A"),
    ({"age": {"gte": 30}}, "AB"),
    ({"age": {"gt": 30, "lt": 100}}, "B"),
    ({"age": {"lte": 30}}, "A"),
    ({"age": {"lt": 0}}, ""),
    ({"age": {"gt": 29.5}}, "AB"),
    ({"age": {"gte": 30, "lte": 30}}, "A"),
    ({"age": {"ne": 30}}, "BCDE"),
    ({"one": 1}, "AB"),
    ({"one": 1.0}, "AB"),
    ({"one": True}, "C"),
    ({"one": {"in": [True, 2]}}, "C"),
    ({"active": True}, "A"),
    ({"active": 1}, "C"),
    ({"active": False}, "B"),
    ({"active": {"ne": True}}, "BCDE"),
    ({"tags": {"contains": "food"}}, "AE"),
    ({"tags": {"contains": 1}}, "C"),
    ({"tags": {"contains": True}}, "C"),
    ({"tags": {"contains": 'say "hi"'}}, "C"),
    ({"tags": {"contains": "back\\slash"}}, "C"),
    ({"tags": "food"}, ""),
    ({"tags": {"ne": "food"}}, ALL),
    ({"tags": {"icontains": "FOOD"}}, "E"),
    ({"note": {"contains": "Pizza"}}, "A"),
    ({"note": {"contains": "pizza"}}, ""),
    ({"note": {"icontains": "PIZZA"}}, "A"),
    ({"note": {"icontains": "STRASSE"}}, "A"),
    ({"note": {"contains": "東京"}}, "B"),
    ({"cjk": "北京"}, "B"),
    ({"cjk": {"in": ["上海", "北京"]}}, "B"),
    ({"user_id": {"in": ["alice", "bob"]}}, "AB"),
    ({"user_id": {"nin": ["alice", "bob"]}}, "CDE"),
    ({"user_id": {"contains": "li"}}, "A"),
    ({"user_id": {"icontains": "O'BRIEN"}}, "C"),
    ({"user_id": 'o\'brien "q"'}, "C"),
    ({"user_id": {"eq": "*"}}, ""),
    ({"age": {"in": [30, 65]}}, "AB"),
    ({"age": {"in": ["30"]}}, "C"),
    ({"age": {"in": [True]}}, "E"),
    ({"score": {"gt": 0}}, "A"),
    ({"score": {"gte": 0}}, "AE"),
    ({"score": {"ne": 1.5}}, "BCDE"),
    ({"score": "*"}, "AE"),
    ({"score": {"lt": 1e9, "gt": -1e9}}, "AE"),
    ({"path": "C:\\Users\\x"}, "C"),
    ({"path": {"contains": "\\Users\\"}}, "C"),
    ({"nested": "*"}, "E"),
    ({"nested": {"eq": "a"}}, ""),
    ({"nested": {"ne": "a"}}, ALL),
    ({"missing": {"ne": "x"}}, ALL),
    ({"missing": {"nin": [1]}}, ALL),
    ({"missing": {"in": [1]}}, ""),
    ({"missing": {"lt": 5}}, ""),
    ({"missing": {"contains": "x"}}, ""),
    ({"missing": {"icontains": "x"}}, ""),
    ({"OR": [{"user_id": "alice"}, {"user_id": "bob"}]}, "AB"),
    ({"AND": [{"age": {"gte": 30}}, {"active": False}]}, "B"),
    ({"AND": [{"user_id": "alice"}]}, "A"),
    ({"NOT": {"user_id": "alice"}}, "BCDE"),
    ({"NOT": [{"user_id": "alice"}, {"user_id": "bob"}]}, "CDE"),
    ({"NOT": {"NOT": {"active": True}}}, "A"),
    ({"user_id": "alice", "age": 30}, "A"),
    ({"user_id": "alice", "age": 31}, ""),
    ({"OR": [{"AND": [{"age": {"gt": 60}}, {"cjk": "*"}]}, {"tags": {"contains": True}}]}, "BC"),
    ({"OR": [{"missing": "*"}, {"user_id": "*"}]}, "ABC"),
    ({"user_id": {"ne": "alice"}, "NOT": {"user_id": {"exists": False}}}, "BC"),
]

# (spec, the path the FilterError must point at)
INVALID: list[tuple[Any, str]] = [
    ("user_id=alice", "$"),
    ([{"a": 1}], "$"),
    ({1: "a"}, "$"),
    ({"age": {"gtee": 1}}, "$.age.gtee"),
    ({"OR": [{"a": 1}, {"age": {"gte": "x"}}]}, "$.OR[1].age.gte"),
    ({"age": {"gt": True}}, "$.age.gt"),
    ({"age": {"gte": 1, "lt": "2"}}, "$.age.lt"),
    ({"x": {"in": 5}}, "$.x.in"),
    ({"x": {"in": "abc"}}, "$.x.in"),
    ({"x": {"in": []}}, "$.x.in"),
    ({"x": {"in": [1, {"a": 1}]}}, "$.x.in[1]"),
    ({"x": {"nin": [[1]]}}, "$.x.nin[0]"),
    ({"x": {"icontains": 5}}, "$.x.icontains"),
    ({"x": {"contains": ["a"]}}, "$.x.contains"),
    ({"x": {"eq": {"a": 1}}}, "$.x.eq"),
    ({"x": {"a": 1}}, "$.x.a"),
    ({"x": float("nan")}, "$.x"),
    ({"x": {"lt": float("inf")}}, "$.x.lt"),
    ({"x": {"in": [1.0, float("-inf")]}}, "$.x.in[1]"),
    ({"x": None}, "$.x"),
    ({"x": [1, 2]}, "$.x"),
    ({"x": {}}, "$.x"),
    ({"x": b"bytes"}, "$.x"),
    ({"x": {"exists": "yes"}}, "$.x.exists"),
    ({"bad-name": 1}, '$["bad-name"]'),
    ({"1abc": 1}, '$["1abc"]'),
    ({"a.b": 1}, '$["a.b"]'),
    ({"AND": {"a": 1}}, "$.AND"),
    ({"AND": []}, "$.AND"),
    ({"AND": [{}]}, "$.AND[0]"),
    ({"OR": "x"}, "$.OR"),
    ({"OR": [1]}, "$.OR[0]"),
    ({"NOT": "x"}, "$.NOT"),
    ({"NOT": []}, "$.NOT"),
    ({"NOT": [{"a": 1}, {"b": {"bogus": 1}}]}, "$.NOT[1].b.bogus"),
    ({"and": [{"a": 1}]}, "$.and"),
    ({"$and": [{"a": 1}]}, '$["$and"]'),
    ({"OR": [{"AND": [{"a": 1}, {"b": {"in": [1, None]}}]}]}, "$.OR[0].AND[1].b.in[1]"),
]


def _ids(cases: list[tuple[Any, str]]) -> list[str]:
    return [json.dumps(spec, ensure_ascii=False, default=repr)[:60] for spec, _ in cases]


@pytest.mark.parametrize(("spec", "expected"), VALID, ids=_ids(VALID))
def test_evaluate_matches_documented_semantics(spec: dict[str, Any], expected: str) -> None:
    node = parse_filter(spec)
    predicate = compile_filter(node)
    for name, payload in PAYLOADS.items():
        want = name in expected
        assert evaluate(node, payload) is want, f"evaluate on payload {name}"
        assert predicate(payload) is want, f"compile_filter on payload {name}"
        assert evaluate(Not(node), payload) is not want, f"NOT on payload {name}"


@pytest.mark.parametrize(("spec", "_expected"), VALID, ids=_ids(VALID))
def test_to_dict_round_trips(spec: dict[str, Any], _expected: str) -> None:
    node = parse_filter(spec)
    rendered = to_dict(node)
    assert json.loads(json.dumps(rendered)) == rendered  # plain JSON data
    again = parse_filter(rendered)
    assert repr(again) == repr(node)  # repr tells True from 1, which == does not
    assert to_dict(again) == rendered


@pytest.mark.parametrize(("spec", "path"), INVALID, ids=_ids(INVALID))
def test_invalid_filters_name_the_offending_node(spec: Any, path: str) -> None:
    with pytest.raises(FilterError) as info:
        parse_filter(spec)
    assert info.value.details["path"] == path
    assert path in info.value.message
    assert info.value.code == "invalid_filter"


def test_unknown_operator_lists_the_valid_ones() -> None:
    with pytest.raises(FilterError) as info:
        parse_filter({"age": {"between": [1, 2]}})
    assert "'between'" in info.value.message
    assert all(op in info.value.message for op in OPERATORS)
    assert info.value.details["valid_operators"] == list(OPERATORS)


def test_lowercase_logical_key_gets_a_hint() -> None:
    with pytest.raises(FilterError, match="uppercase: 'OR'"):
        parse_filter({"or": [{"a": 1}]})


def test_no_filter_and_already_parsed_nodes() -> None:
    assert parse_filter(None) is None
    assert parse_filter({}) is None
    node = Comparison("a", "eq", 1)
    assert parse_filter(node) is node
    assert evaluate(None, {"a": 1}) is True
    assert compile_filter(None)({}) is True
    assert to_dict(None) == {}


def test_parser_normalises_the_tree() -> None:
    assert parse_filter({"a": 1}) == Comparison("a", "eq", 1)
    assert parse_filter({"a": {"in": [1, "x"]}}) == Comparison("a", "in", (1, "x"))
    assert parse_filter({"a": "*"}) == Comparison("a", "exists", True)
    assert parse_filter({"a": {"exists": False}}) == Not(Comparison("a", "exists", True))
    assert parse_filter({"OR": [{"a": 1}]}) == Comparison("a", "eq", 1)
    nested = parse_filter({"a": 1, "AND": [{"b": 2}, {"c": 3}]})
    assert nested == And(
        (Comparison("a", "eq", 1), Comparison("b", "eq", 2), Comparison("c", "eq", 3))
    )
    ors = parse_filter({"OR": [{"OR": [{"a": 1}, {"b": 2}]}, {"c": 3}]})
    assert ors == Or((Comparison("a", "eq", 1), Comparison("b", "eq", 2), Comparison("c", "eq", 3)))
    assert parse_filter({"NOT": [{"a": 1}, {"b": 2}]}) == Not(
        Or((Comparison("a", "eq", 1), Comparison("b", "eq", 2)))
    )
    assert parse_filter({"age": {"gte": 1, "lt": 5}}) == And(
        (Comparison("age", "gte", 1), Comparison("age", "lt", 5))
    )


def test_parse_accepts_ast_nodes_inside_logical_lists() -> None:
    inner = Comparison("a", "eq", 1)
    assert parse_filter({"OR": [inner, {"b": 2}]}) == Or((inner, Comparison("b", "eq", 2)))


def test_to_dict_renders_canonical_syntax() -> None:
    node = parse_filter({"a": 1, "b": "*", "OR": [{"c": {"in": [1, 2]}}, {"NOT": {"d": True}}]})
    assert to_dict(node) == {
        "AND": [
            {"a": {"eq": 1}},
            {"b": "*"},
            {"OR": [{"c": {"in": [1, 2]}}, {"NOT": {"d": {"eq": True}}}]},
        ]
    }
    assert to_dict(And(())) == {}
    with pytest.raises(FilterError):
        to_dict("not a node")  # type: ignore[arg-type]


def test_literal_star_needs_explicit_eq() -> None:
    node = parse_filter({"x": {"eq": "*"}})
    assert node == Comparison("x", "eq", "*")
    assert evaluate(node, {"x": "*"}) and not evaluate(node, {"x": "y"})
    assert parse_filter(to_dict(node)) == node


def test_evaluate_rejects_foreign_objects() -> None:
    with pytest.raises(FilterError):
        evaluate("nope", {})  # type: ignore[arg-type]
    with pytest.raises(FilterError):
        compile_filter(42)  # type: ignore[arg-type]
    with pytest.raises(FilterError):
        evaluate(Comparison("a", "like", "x"), {"a": "x"})  # type: ignore[arg-type]


def test_empty_and_matches_everything_and_empty_or_nothing() -> None:
    assert evaluate(And(()), {}) is True and compile_filter(And(()))({}) is True
    assert evaluate(Or(()), {}) is False and compile_filter(Or(()))({}) is False


def test_scope_filter_builds_eq_conjunction() -> None:
    assert scope_filter() is None
    assert scope_filter(user_id="alice") == Comparison("user_id", "eq", "alice")
    node = scope_filter(user_id="alice", agent_id="bot", run_id="r1")
    assert node == And(
        (
            Comparison("user_id", "eq", "alice"),
            Comparison("agent_id", "eq", "bot"),
            Comparison("run_id", "eq", "r1"),
        )
    )
    assert evaluate(node, {"user_id": "alice", "agent_id": "bot", "run_id": "r1"})
    assert not evaluate(node, {"user_id": "alice", "agent_id": "bot"})
    with pytest.raises(FilterError) as info:
        scope_filter(user_id="")
    assert info.value.details["path"] == "$.user_id"
    with pytest.raises(FilterError):
        scope_filter(agent_id=5)  # type: ignore[arg-type]


def test_conjoin_flattens_and_skips_none() -> None:
    a, b, c = Comparison("a", "eq", 1), Comparison("b", "eq", 2), Comparison("c", "eq", 3)
    assert conjoin() is None
    assert conjoin(None, None) is None
    assert conjoin(a) is a
    assert conjoin(And((a, b)), None, c) == And((a, b, c))
    assert conjoin({"a": 1}, {"b": 2}) == And((a, b))
    assert conjoin(scope_filter(user_id="u"), {}) == Comparison("user_id", "eq", "u")
    with pytest.raises(FilterError):
        conjoin({"a": {"bad": 1}})


def _random_node(rng: random.Random, depth: int) -> Any:
    if depth == 0 or rng.random() < 0.4:
        field = rng.choice(["user_id", "age", "score", "tags", "one", "active", "missing", "note"])
        op = rng.choice(OPERATORS)
        values: list[Any] = ["alice", "food", 30, 1, 1.0, True, False, 1.5, "東京", "30"]
        if op in ("in", "nin"):
            return Comparison(field, op, tuple(rng.sample(values, 3)))
        if op in ("gt", "gte", "lt", "lte"):
            return Comparison(field, op, rng.choice([0, 1.5, 30, 65, -1]))
        if op == "icontains":
            return Comparison(field, op, rng.choice(["ALICE", "food", "pizza", "東京"]))
        if op == "exists":
            return Comparison(field, op, True)
        return Comparison(field, op, rng.choice(values))
    kind = rng.choice(["and", "or", "not"])
    if kind == "not":
        return Not(_random_node(rng, depth - 1))
    children = tuple(_random_node(rng, depth - 1) for _ in range(rng.randint(1, 3)))
    return And(children) if kind == "and" else Or(children)


def test_compile_and_round_trip_agree_with_evaluate_on_random_trees() -> None:
    rng = random.Random(20240611)
    for _ in range(400):
        node = _random_node(rng, 3)
        predicate = compile_filter(node)
        reparsed = parse_filter(to_dict(node))  # normalised, so only semantics must survive
        for payload in PAYLOADS.values():
            expected = evaluate(node, payload)
            assert predicate(payload) is expected, repr(node)
            assert evaluate(reparsed, payload) is expected, repr(node)
