"""Filter translation: Upstash filter strings, quoting, and agreement with the evaluator.

The agreement test runs every translated expression through the emulator's parser and
evaluator and checks that it is a superset of the reference evaluator's answer (and equal
to it when the translation claims to be exact), on payloads with tricky strings.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from memoweave_upstash.emulator import matches, parse
from memoweave_upstash.filters import glob_escape, literal, quote, translate
from memoweave_upstash.payloads import encode_payload

from memoweave.filters import evaluate, parse_filter
from memoweave.providers.store_checks import check_payload
from memoweave.testing import FILTER_CASES, FILTER_CORPUS

TRICKY = ["it's", 'say "hi"', "back\\slash", "both ' and \"", "東京 ラーメン", "*?[x]", ""]


@pytest.mark.parametrize("value", TRICKY)
def test_quoted_strings_parse_back_to_the_value(value: str) -> None:
    expr = parse(f"k = {quote(value)}")
    assert expr is not None and expr.value == value  # type: ignore[union-attr]


def test_quote_prefers_plain_quotes() -> None:
    assert quote("plain") == "'plain'"
    assert quote("it's") == '"it\'s"'
    assert quote("a\\b") == "'a\\\\b'"
    assert quote("'\"") == "'\\'\"'"


@pytest.mark.parametrize("value", TRICKY)
def test_glob_escape_matches_the_literal_text(value: str) -> None:
    expr = parse(f"k GLOB {quote('*' + glob_escape(value) + '*')}")
    assert matches(expr, {"k": f"pre{value}post"})
    if value:
        assert not matches(expr, {"k": "pre" + value[:-1] + "post"})


@pytest.mark.parametrize(
    ("value", "text"),
    [(True, "true"), (False, "false"), (3, "3"), (-2.5, "-2.5"), (1e-7, "0.0000001"),
     (1e20, "100000000000000000000.0"), ("x", "'x'")],
)  # fmt: skip
def test_literals(value: Any, text: str) -> None:
    assert literal(value) == text


@pytest.mark.parametrize(
    ("spec", "expression", "exact"),
    [
        ({"user_id": "alice"}, "user_id = 'alice'", True),
        ({"n": {"ne": 3}}, "(HAS NOT FIELD n OR n != 3)", True),
        ({"n": {"nin": [1, 2]}}, "(HAS NOT FIELD n OR n NOT IN (1, 2))", True),
        ({"n": {"gte": 1, "lt": 5}}, "(n >= 1 AND n < 5)", True),
        ({"t": {"contains": "a*"}}, "(t CONTAINS 'a*' OR t GLOB '*a[*]*')", True),
        ({"t": {"contains": 4}}, "t CONTAINS 4", True),
        ({"t": {"icontains": "Ab"}}, "HAS FIELD t", False),
        ({"t": "*"}, "HAS FIELD t", True),
        ({"NOT": {"t": "*"}}, "HAS NOT FIELD t", True),
        ({"NOT": {"n": {"gt": 1}}}, "", False),
        ({"NOT": {"OR": [{"a": 1}, {"b": True}]}},
         "((HAS NOT FIELD a OR a != 1) AND (HAS NOT FIELD b OR b != true))", True),
        ({"OR": [{"a": 1}, {"n": {"icontains": "x"}}]}, "(a = 1 OR HAS FIELD n)", False),
        ({"OR": [{"a": 1}, {"NOT": {"n": {"lt": 0}}}]}, "", False),
        ({"and": 1}, "", False),
    ],
)  # fmt: skip
def test_translation(spec: dict[str, Any], expression: str, exact: bool) -> None:
    translation = translate(parse_filter(spec))
    assert (translation.expression, translation.exact) == (expression, exact)


def _payloads() -> list[dict[str, Any]]:
    extra = [{"k": v, "tags": [v, 1]} for v in TRICKY]
    return [
        *(payload for _, _, payload in FILTER_CORPUS),
        *extra,
        {"k": None},
        {},
        {"k": True},
        {"k": 1},
        {"k": 1.0},
    ]


def _specs() -> list[Any]:
    specs: list[Any] = [case.spec for case in FILTER_CASES]
    for value, op in itertools.product(TRICKY, ["eq", "ne", "contains", "icontains", "in", "nin"]):
        arg = [value, "zz"] if op in ("in", "nin") else value
        specs += [{"k": {op: arg}}, {"tags": {op: arg}}, {"NOT": {"k": {op: arg}}}]
    return specs


def test_translation_is_a_superset_and_exact_when_it_says_so() -> None:
    payloads = _payloads()
    for spec in _specs():
        node = parse_filter(spec)
        translation = translate(node)
        expr = parse(translation.expression)
        for payload in payloads:
            want = evaluate(node, payload)
            got = matches(expr, encode_payload(check_payload(payload))) and not translation.nothing
            assert got or not want, f"{spec!r} lost {payload!r} ({translation.expression})"
            if translation.exact:
                assert got == want, f"{spec!r} on {payload!r}: {translation.expression}"
