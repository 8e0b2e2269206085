"""Unit tests of the filter AST -> Milvus expression translation (no engine needed)."""

from __future__ import annotations

import pytest
from memoweave_milvus.filters import string_literal, translate

from memoweave.errors import FilterError
from memoweave.filters import parse_filter
from memoweave.filters.ast import And, Comparison, Or


def tr(spec):
    return translate(parse_filter(spec))


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        ("plain", '"plain"'),
        ("o'brien", '"o\'brien"'),
        ('say "hi"', '"say \\"hi\\""'),
        ("back\\slash", '"back\\\\slash"'),
        ("a\nb\tc\rd", '"a\\nb\\tc\\rd"'),
        ("李雷 🎉", '"李雷 🎉"'),
        ('\\"', '"\\\\\\""'),
    ],
)
def test_string_literal_escapes(value: str, literal: str) -> None:
    assert string_literal(value) == literal


def test_no_filter_is_exact_and_unconditional() -> None:
    t = translate(None)
    assert (t.expr, t.empty, t.exact) == ("", False, True)


def test_scope_key_uses_indexed_column() -> None:
    t = tr({"user_id": "alice"})
    assert (t.expr, t.exact) == ('user_id == "alice"', True)
    t = tr({"user_id": {"in": ["a", "b"]}})
    assert (t.expr, t.exact) == ('user_id in ["a", "b"]', True)


def test_scope_key_negation_keeps_missing_and_null() -> None:
    t = tr({"agent_id": {"ne": "planner"}})
    assert (t.expr, t.exact) == ('agent_id is null or agent_id != "planner"', True)
    t = tr({"run_id": {"nin": ["r1", "r2"]}})
    assert (t.expr, t.exact) == ('run_id is null or run_id not in ["r1", "r2"]', True)


def test_scope_key_with_non_string_or_huge_value_uses_json_path() -> None:
    assert tr({"user_id": 7}).expr == 'payload["user_id"] == 7'
    huge = "x" * 600
    assert tr({"user_id": huge}).expr == f'payload["user_id"] == "{huge}"'
    assert tr({"user_id": "*"}).expr == 'payload["user_id"] is not null'


def test_other_keys_use_json_path() -> None:
    t = tr({"category": "food", "age": {"gte": 30}})
    assert t.exact
    assert t.expr == '(payload["category"] == "food") and (payload["age"] >= 30)'
    # Milvus lets JSON booleans satisfy `< 45`, so that bound is post-filtered.
    t = tr({"age": {"gte": 30, "lt": 45}})
    assert t.expr == '(payload["age"] >= 30) and (payload["age"] < 45)'
    assert not t.exact


def test_not_is_pushed_to_the_leaves_without_not_keyword() -> None:
    t = tr({"NOT": {"OR": [{"user_id": "alice"}, {"category": "food"}]}})
    assert " not " not in f" {t.expr} "
    assert t.expr == (
        '(user_id is null or user_id != "alice") and '
        '(payload["category"] is null or payload["category"] != "food")'
    )
    assert t.exact
    assert tr({"NOT": {"NOT": {"user_id": "erin"}}}).expr == 'user_id == "erin"'
    assert tr({"NOT": {"run_id": "*"}}).expr == 'payload["run_id"] is null'


@pytest.mark.parametrize(
    "spec",
    [
        {"active": True},
        {"priority": 1},
        {"priority": 0.0},
        {"active": {"ne": False}},
        {"priority": {"in": [1, "x"]}},
        {"age": {"gte": 0}},
        {"age": {"lt": 0.5}},
        {"nums": {"contains": 1}},
        {"tags": {"contains": True}},
        {"note": {"contains": "50%"}},
        {"note": {"contains": "a_b"}},
        {"note": {"contains": "C:\\x"}},
        {"note": {"icontains": "PIZZA"}},
    ],
)
def test_inexact_leaves_are_flagged_for_post_filtering(spec) -> None:
    assert not tr(spec).exact


@pytest.mark.parametrize(
    "spec",
    [
        {"age": 30},
        {"score": 2.5},
        {"age": {"gt": 1}},
        {"age": {"gte": 1.5}},
        {"age": {"lt": 0}},
        {"age": {"lte": -0.5}},
        {"nums": {"contains": 3}},
        {"note": {"contains": "pizza"}},
        {"note": {"contains": 'It\'s "x"'}},
        {"category": "*"},
    ],
)
def test_exact_leaves(spec) -> None:
    assert tr(spec).exact


def test_negated_range_and_contains_fall_back_to_no_condition() -> None:
    t = tr({"NOT": {"age": {"gt": 40}}})
    assert (t.expr, t.empty, t.exact) == ("", False, False)
    t = tr({"user_id": "alice", "NOT": {"tags": {"contains": "food"}}})
    assert (t.expr, t.exact) == ('user_id == "alice"', False)


def test_like_wildcards_are_widened_not_escaped() -> None:
    t = tr({"note": {"contains": "50%_off\\"}})
    assert t.expr == (
        'payload["note"] like "%50__off_%" or json_contains(payload["note"], "50%_off\\\\")'
    )


def test_icontains_keeps_only_strings() -> None:
    assert tr({"note": {"icontains": "x"}}).expr == 'payload["note"] like "%"'


def test_empty_or_matches_nothing_and_empty_and_everything() -> None:
    assert translate(Or(())).empty
    t = translate(And(()))
    assert (t.expr, t.empty, t.exact) == ("", False, True)
    assert translate(Or((Or(()), Comparison("user_id", "eq", "a")))).expr == 'user_id == "a"'


def test_numbers_milvus_cannot_represent_are_post_filtered() -> None:
    t = translate(Comparison("big", "eq", 2**70))
    assert (t.expr, t.exact) == ("", False)
    t = translate(Comparison("x", "gt", float("inf")))
    assert (t.expr, t.exact) == ("", False)


def test_invalid_field_name_raises_filter_error() -> None:
    with pytest.raises(FilterError):
        translate(Comparison('a"] or 1==1 or payload["b', "eq", "x"))


def test_server_mode_post_filters_numeric_comparisons() -> None:
    node = parse_filter({"user_id": "alice", "age": {"gte": 30}, "tags": {"contains": 3}})
    t = translate(node, native_numbers=False)
    assert (t.expr, t.exact) == ('user_id == "alice"', False)
    t = translate(parse_filter({"NOT": {"priority": {"in": [1, "x"]}}}), native_numbers=False)
    assert (t.expr, t.exact) == ("", False)
    t = translate(parse_filter({"category": {"in": ["a", "b"]}}), native_numbers=False)
    assert t.exact
