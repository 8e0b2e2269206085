"""The filter dataset of the conformance kit: a fixed corpus and 50+ filter expressions.

Expected results are never written down: the suites compute them at test time with the
reference evaluator :func:`memoweave.filters.evaluate`, so the dataset cannot drift from the
filter semantics. Payloads exercise scope keys, CJK, quotes, backslashes, ints, floats,
bools, lists, missing fields and ``None`` values.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from typing import Any

from memoweave.filters.ast import FilterNode

DIMS = 8
_NAMESPACE = uuid.UUID("6f1c1d1e-5b0a-4d8e-9a57-1e0d3c2b4a59")


def kit_id(label: str) -> str:
    """A deterministic canonical UUID for a readable label (``kit_id("f03")``)."""
    return str(uuid.uuid5(_NAMESPACE, label))


def kit_vector(seed: int | str, dims: int = DIMS) -> list[float]:
    """A deterministic non-zero vector with components in [-1, 1]."""
    rng = random.Random(f"memoweave-kit-{seed}")
    vec = [rng.uniform(-1.0, 1.0) for _ in range(dims)]
    vec[0] += 0.05  # never all zeros
    return vec


_PAYLOADS: list[dict[str, Any]] = [
    {"user_id": "alice", "agent_id": "planner", "run_id": "r1", "actor_id": "user",
     "category": "food", "age": 30, "score": 0.5, "active": True,
     "tags": ["food", "italian"], "note": "Loves pizza"},
    {"user_id": "alice", "agent_id": "support", "run_id": "r2", "category": "travel",
     "age": 31, "score": 1.0, "active": False, "tags": ["travel"], "note": "Trip to Kyoto"},
    {"user_id": "alice2", "agent_id": "planner", "category": "food", "age": 45,
     "score": 2.5, "active": True, "tags": ["food", "vegan"], "note": "vegan since 2019"},
    {"user_id": "Alice", "actor_id": "assistant", "category": "work", "age": 18,
     "score": -1.5, "active": True, "tags": [], "note": "PIZZA party at work"},
    {"user_id": "bob", "agent_id": "planner", "run_id": "r1", "category": None, "age": 64,
     "score": 3.75, "active": False, "tags": ["sport", "food"], "note": None},
    {"user_id": "bob", "agent_id": None, "run_id": "r3", "actor_id": "user",
     "category": "travel", "age": 65, "score": 0.0, "tags": ["travel", "旅行"],
     "note": "Flight to 東京 on Monday"},
    {"user_id": "李雷", "agent_id": "助手", "category": "food", "age": 22, "score": 1.25,
     "active": True, "tags": ["食物", "food"], "note": "喜欢吃饺子"},
    {"user_id": "韩梅梅", "category": "work", "age": 23, "score": 0.75, "active": False,
     "note": "在北京工作"},
    {"user_id": "o'brien", "agent_id": "planner", "category": "food", "age": 40,
     "score": 10.0, "active": True, "tags": ["irish"], "note": "It's O'Brien's pub"},
    {"user_id": 'say "hi"', "category": "work", "age": 50, "score": -0.25,
     "active": True, "tags": ['quote"d'], "note": 'He said "hello"'},
    {"user_id": "back\\slash", "category": "misc", "age": 0, "score": 0.001, "active": False,
     "tags": ["path\\to"], "note": "C:\\Users\\kit"},
    {"user_id": "carol", "agent_id": "support", "run_id": "r2", "actor_id": "assistant",
     "category": "Food", "age": 29, "score": 1.0, "active": True, "tags": ["Food"],
     "note": "Straße in Berlin", "priority": 1},
    {"user_id": "carol", "agent_id": "planner", "run_id": "r2", "category": "food",
     "age": 35, "score": 2.0, "active": None, "tags": ["food", "italian", "pasta"],
     "note": "pasta al dente", "priority": True},
    {"user_id": "dave", "category": "travel", "age": 100, "score": 99.5, "active": True,
     "tags": ["travel", "food"], "note": "around the world", "priority": 2.0},
    {"user_id": "dave", "agent_id": "planner", "run_id": "r1", "age": -5, "score": -10.0,
     "active": False, "note": "negative age record", "priority": 0},
    {"user_id": "erin", "agent_id": "support", "category": "", "age": 27, "score": 4.5,
     "active": True, "tags": [""], "note": ""},
    {"user_id": "erin", "run_id": "r4", "actor_id": "user", "category": "food",
     "score": 5.0, "active": True, "tags": ["food"], "note": "no age field",
     "nums": [1, 2, 3]},
    {"user_id": "frank", "agent_id": "planner", "category": "work", "age": 33,
     "score": None, "active": True, "tags": ["work", "food"], "note": "score is null",
     "nums": [3, 4]},
    {"user_id": "grace", "category": "travel", "age": 41, "score": 7.25, "active": False,
     "tags": ["travel"], "note": "emoji 🎉 party", "extra": {"nested": {"k": [1, 2]}}},
    {"user_id": "alice", "agent_id": "planner", "run_id": "r9", "actor_id": "user",
     "category": "travel", "age": 30.0, "score": 0.5, "active": True,
     "tags": ["travel", "food"], "note": "loves pizza too"},
]  # fmt: skip

#: ``(id, vector, payload)`` of every corpus record.
FILTER_CORPUS: list[tuple[str, list[float], dict[str, Any]]] = [
    (kit_id(f"filter-{i:02d}"), kit_vector(f"filter-{i}"), payload)
    for i, payload in enumerate(_PAYLOADS)
]


@dataclass(frozen=True)
class FilterCase:
    """One filter expression: a readable ``name``, its ``group`` and the ``spec`` to parse."""

    name: str
    group: str
    spec: dict[str, Any] | FilterNode


def _cases(group: str, *items: tuple[str, dict[str, Any] | FilterNode]) -> list[FilterCase]:
    return [FilterCase(name, group, spec) for name, spec in items]


FILTER_CASES: list[FilterCase] = [
    *_cases(
        "equality",
        ("eq_str", {"user_id": "alice"}),
        ("eq_str_op", {"user_id": {"eq": "bob"}}),
        ("eq_case_sensitive", {"user_id": "Alice"}),
        ("eq_cjk", {"user_id": "李雷"}),
        ("eq_single_quote", {"user_id": "o'brien"}),
        ("eq_double_quote", {"user_id": 'say "hi"'}),
        ("eq_backslash", {"user_id": "back\\slash"}),
        ("eq_empty_string", {"category": ""}),
        ("eq_int", {"age": 30}),
        ("eq_float_matches_int", {"age": 30.0}),
        ("eq_int_matches_float", {"score": 1}),
        ("eq_float", {"score": 2.5}),
        ("eq_bool_true", {"active": True}),
        ("eq_bool_false", {"active": False}),
        ("eq_int_is_not_bool", {"priority": 1}),
        ("eq_bool_is_not_int", {"priority": True}),
        ("eq_on_list_field_is_false", {"tags": "food"}),
        ("ne_str_includes_missing", {"agent_id": {"ne": "planner"}}),
        ("ne_bool_includes_none", {"active": {"ne": True}}),
        ("ne_number", {"age": {"ne": 30}}),
    ),
    *_cases(
        "membership",
        ("in_str", {"user_id": {"in": ["alice", "bob", "nobody"]}}),
        ("in_single", {"category": {"in": ["work"]}}),
        ("in_numbers", {"age": {"in": [30, 64, 1000]}}),
        ("in_mixed_types", {"priority": {"in": [1, "x"]}}),
        ("in_cjk", {"agent_id": {"in": ["助手", "planner"]}}),
        ("nin_str_includes_missing", {"category": {"nin": ["food", "travel"]}}),
        ("nin_run", {"run_id": {"nin": ["r1", "r2"]}}),
    ),
    *_cases(
        "range",
        ("gt_int", {"age": {"gt": 40}}),
        ("gte_int", {"age": {"gte": 40}}),
        ("lt_int", {"age": {"lt": 23}}),
        ("lte_int", {"age": {"lte": 23}}),
        ("between", {"age": {"gte": 30, "lt": 45}}),
        ("gt_float_on_int", {"age": {"gt": 29.5}}),
        ("float_range", {"score": {"gt": -1.0, "lte": 1.0}}),
        ("negative_bound", {"score": {"lt": -0.1}}),
        ("range_skips_bool", {"priority": {"gte": 0}}),
        ("range_zero", {"age": {"lte": 0}}),
    ),
    *_cases(
        "contains",
        ("contains_substring", {"note": {"contains": "pizza"}}),
        ("contains_is_case_sensitive", {"note": {"contains": "Pizza"}}),
        ("contains_list_element", {"tags": {"contains": "food"}}),
        ("contains_list_cjk", {"tags": {"contains": "旅行"}}),
        ("contains_cjk_substring", {"note": {"contains": "東京"}}),
        ("contains_quote", {"note": {"contains": "O'Brien"}}),
        ("contains_double_quote", {"note": {"contains": '"hello"'}}),
        ("contains_backslash", {"note": {"contains": "\\Users"}}),
        ("contains_list_int", {"nums": {"contains": 3}}),
        ("contains_list_escaped", {"tags": {"contains": 'quote"d'}}),
        ("icontains_ascii", {"note": {"icontains": "PIZZA"}}),
        ("icontains_casefold", {"note": {"icontains": "STRASSE"}}),
        ("icontains_cjk", {"note": {"icontains": "北京"}}),
        ("icontains_emoji", {"note": {"icontains": "🎉"}}),
    ),
    *_cases(
        "presence",
        ("exists", {"agent_id": "*"}),
        ("exists_none_is_absent", {"category": "*"}),
        ("exists_sparse", {"priority": "*"}),
        ("not_exists", {"NOT": {"run_id": "*"}}),
        ("eq_on_none_is_false", {"note": {"eq": "x"}}),
        ("contains_on_none_is_false", {"note": {"contains": "a"}}),
    ),
    *_cases(
        "logic",
        ("implicit_and", {"user_id": "alice", "agent_id": "planner"}),
        ("scope_triple", {"user_id": "alice", "agent_id": "planner", "run_id": "r1"}),
        ("and_list", {"AND": [{"category": "food"}, {"age": {"gte": 30}}]}),
        ("or_list", {"OR": [{"user_id": "bob"}, {"category": "work"}]}),
        ("not_single", {"NOT": {"category": "food"}}),
        ("not_list_is_nor", {"NOT": [{"category": "food"}, {"category": "travel"}]}),
        ("and_inside_or", {"OR": [{"AND": [{"user_id": "alice"}, {"active": True}]},
                                  {"age": {"gt": 90}}]}),
        ("or_inside_and", {"AND": [{"OR": [{"user_id": "carol"}, {"user_id": "dave"}]},
                                   {"NOT": {"active": False}}]}),
        ("not_of_or", {"NOT": {"OR": [{"user_id": "alice"}, {"tags": {"contains": "food"}}]}}),
        ("double_not", {"NOT": {"NOT": {"user_id": "erin"}}}),
        ("deep_nesting", {"AND": [{"user_id": {"in": ["alice", "bob", "carol"]}},
                                  {"OR": [{"NOT": {"category": "*"}},
                                          {"AND": [{"score": {"gte": 1}},
                                                   {"tags": {"contains": "food"}}]}]}]}),
        ("scope_and_or", {"user_id": "alice", "OR": [{"run_id": "r1"}, {"run_id": "r9"}]}),
        ("matches_nothing", {"AND": [{"user_id": "alice"}, {"user_id": "bob"}]}),
    ),
]  # fmt: skip

GROUPS: tuple[str, ...] = ("equality", "membership", "range", "contains", "presence", "logic")


def cases_in(group: str) -> list[FilterCase]:
    """The cases of one group."""
    return [case for case in FILTER_CASES if case.group == group]
