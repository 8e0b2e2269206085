"""The emulator's filter language: tokenizer, parser, evaluator and GLOB, without HTTP."""

from __future__ import annotations

import pytest
from memoweave_upstash.emulator import FilterSyntaxError, glob_match, matches, parse
from memoweave_upstash.emulator.filter_eval import validate
from memoweave_upstash.emulator.filter_parser import BoolOp, Compare, HasField

CITY = {
    "city": "Istanbul",
    "country": "Turkey",
    "is_capital": False,
    "population": 15460000,
    "nothing": None,
    "geography": {"continent": "Asia", "coordinates": {"latitude": 41.0082}},
    "economy": {"currency": "TRY", "major_industries": ["Tourism", "Textiles", "Finance"]},
}


def check(text: str, metadata: dict | None = None) -> bool:
    expr = parse(text)
    validate(expr)
    return matches(expr, CITY if metadata is None else metadata)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("country = 'Turkey' AND population = 15460000 AND is_capital = false", True),
        ("country != 'Germany' AND population != 12500000 AND is_capital != true", True),
        ("population < 20000000 OR geography.coordinates.latitude < 30.0", True),
        ("population >= 15460000 AND population <= 15460000.0", True),
        ("city GLOB '?[sz]*[^m-z]'", True),
        ("city GLOB '?[sz]*[^a-z]'", False),
        ("city GLOB 'I?tanb*'", True),
        ("city NOT GLOB 'A*'", True),
        ("country IN ('Germany', 'Turkey', 'France')", True),
        ("economy.currency NOT IN ('USD', 'EUR')", True),
        ("economy.major_industries CONTAINS 'Tourism'", True),
        ("economy.major_industries NOT CONTAINS 'Steel Production'", True),
        ("economy.major_industries[0] = 'Tourism'", True),
        ("economy.major_industries[#-1] = 'Finance'", True),
        ("economy.major_industries[3] = 'Finance'", False),
        ("HAS FIELD geography.coordinates", True),
        ("HAS NOT FIELD geography.coordinates.longitude", True),
        ("HAS FIELD nothing", True),
        ("nothing = 'x' OR nothing IN ('x')", False),
        ("country = 'Turkey' AND population > 20000000 OR is_capital = false", True),
        ("country = 'Turkey' AND (population > 20000000 OR is_capital = true)", False),
        ("country = 'Germany' or city = 'Istanbul' and population > 1", True),
        ("is_capital = 0 OR population = true", False),
        ("city < 5 OR economy.major_industries = 'Tourism'", False),
        ("missing != 'x' OR missing NOT IN ('x') OR missing NOT GLOB 'x'", False),
        ("economy != 'x' AND nothing != 'x'", True),
        ("   ", True),
    ],
)
def test_documented_examples(text: str, expected: bool) -> None:
    assert check(text) is expected


def test_and_binds_tighter_than_or() -> None:
    expr = parse("a = 1 OR b = 2 AND c = 3")
    assert isinstance(expr, BoolOp) and expr.op == "OR"
    assert isinstance(expr.children[1], BoolOp) and expr.children[1].op == "AND"


def test_keywords_and_booleans_are_case_insensitive() -> None:
    expr = parse("HaS nOt FiElD x aNd y NoT iN (TRUE, False)")
    assert isinstance(expr, BoolOp)
    assert expr.children[0] == HasField(expr.children[0].path, negated=True)
    second = expr.children[1]
    assert isinstance(second, Compare) and second.op == "NOT IN"
    assert second.value == (True, False)


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        (r"'it\'s'", "it's"),
        ('"it\'s"', "it's"),
        (r'"say \"hi\""', 'say "hi"'),
        (r"'back\\slash'", "back\\slash"),
        ("'東京 ラーメン'", "東京 ラーメン"),
        ("''", ""),
    ],
)
def test_string_literals_and_escapes(literal: str, value: str) -> None:
    expr = parse(f"k = {literal}")
    assert isinstance(expr, Compare) and expr.value == value
    assert check(f"k = {literal}", {"k": value})


@pytest.mark.parametrize(
    ("literal", "value"),
    [("12", 12), ("-3", -3), ("2.5", 2.5), ("-0.001", -0.001), ("1e3", 1000.0)],
)
def test_number_literals(literal: str, value: float) -> None:
    expr = parse(f"n = {literal}")
    assert isinstance(expr, Compare) and expr.value == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("country = ", "expected a literal"),
        ("country 'Turkey'", "expected an operator"),
        ("(a = 1", "expected rparen"),
        ("a = 1 b = 2", "expected eof"),
        ("a = 'unterminated", "unterminated string"),
        ("a ~ 1", "unexpected character"),
        ("HAS FIELD", "expected ident"),
        ("a GLOB 5", "expected string"),
        ("a IN ()", "expected a literal"),
        ("a < 'x'", "needs a number"),
        ("a..b = 1", "invalid identifier"),
        ("a ! 1", "unexpected character"),
    ],
)
def test_syntax_errors_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(FilterSyntaxError, match=message):
        validate(parse(text))


def test_type_strict_equality() -> None:
    meta = {"b": True, "i": 1, "f": 1.0, "s": "1", "l": [1, True]}
    assert check("i = 1.0 AND f = 1 AND b = true AND s = '1'", meta)
    assert not check("b = 1", meta)
    assert not check("i = true", meta)
    assert not check("s = 1", meta)
    assert check("l CONTAINS 1 AND l CONTAINS true", meta)
    assert not check("l CONTAINS '1'", meta)
    assert not check("b > 0", meta)


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("*", "", True),
        ("a*c", "abbbc", True),
        ("a?c", "abc", True),
        ("a?c", "ac", False),
        ("[abc]x", "bx", True),
        ("[a-c]x", "dx", False),
        ("[^a-c]x", "dx", True),
        ("[]]", "]", True),
        ("[*]", "*", True),
        ("[*]", "a", False),
        ("[?]x", "?x", True),
        ("[[]", "[", True),
        ("a[", "a[", True),
        ("Pizza", "pizza", False),
        ("*\\", "a\\b", False),
        ("*\\", "a\\", True),
        ("*漢字*", "这是漢字吗", True),
        ("line*", "line1\nline2", True),
    ],
)
def test_glob_semantics(pattern: str, text: str, expected: bool) -> None:
    assert glob_match(pattern, text) is expected
