"""Filter translation: unit checks of the neutral tree, and the exactness claims checked
against the real engines with the post-filter switched off."""

from __future__ import annotations

from typing import Any

from memoweave_qdrant.filters import (
    LISTS_KEY,
    MATCH_NOTHING,
    Clause,
    IsEmpty,
    Match,
    Range,
    translate,
)

from memoweave.filters import evaluate, parse_filter
from memoweave.filters.ast import And, Comparison, Not, Or
from memoweave.providers.vector_store import VectorRecord
from memoweave.testing import FILTER_CASES, FILTER_CORPUS


def test_none_filter_matches_everything_exactly() -> None:
    assert translate(None) == (None, True)


def test_eq_string_excludes_lists() -> None:
    clause, exact = translate(Comparison("user_id", "eq", "alice"))
    assert exact
    assert clause == Clause(
        must=(Match("user_id", "alice"),), must_not=(Match(LISTS_KEY, "user_id"),)
    )


def test_eq_number_is_a_point_range_and_bool_stays_a_match() -> None:
    number, _ = translate(Comparison("age", "eq", 30))
    flag, _ = translate(Comparison("active", "eq", True))
    assert number is not None and flag is not None
    assert number.must == (Range("age", gte=30.0, lte=30.0),)
    assert flag.must == (Match("active", True),)


def test_huge_int_equality_is_not_claimed_exact() -> None:
    assert translate(Comparison("n", "eq", 2**60))[1] is False


def test_icontains_is_a_superset_and_not_of_it_is_post_filtered() -> None:
    clause, exact = translate(Comparison("note", "icontains", "pizza"))
    assert not exact
    assert clause == Clause(must_not=(IsEmpty("note"), Match(LISTS_KEY, "note")))
    assert translate(Not(Comparison("note", "icontains", "pizza"))) == (None, False)


def test_or_with_an_unfilterable_branch_matches_all_natively() -> None:
    node = Or((Comparison("a", "eq", "x"), Not(Comparison("b", "icontains", "y"))))
    assert translate(node) == (None, False)


def test_empty_or_matches_nothing_and_empty_and_everything() -> None:
    assert translate(Or(())) == (MATCH_NOTHING, True)
    assert translate(And(())) == (None, True)


def _exact_cases() -> list[Any]:
    return [case for case in FILTER_CASES if translate(parse_filter(case.spec))[1]]


def test_exact_translations_agree_with_the_reference_evaluator(
    qdrant_make_store: Any, qdrant_config: dict[str, Any]
) -> None:
    """Every filter the translator calls exact gives the evaluator's set with no post-filter."""
    store = qdrant_make_store(qdrant_config)
    store.ensure_collection("native", 8)
    store.upsert([VectorRecord(i, v, p) for i, v, p in FILTER_CORPUS])
    engine = store._engine  # the engine itself: no post-filter in the way
    cases = _exact_cases()
    assert len(cases) > 40
    problems = []
    for case in cases:
        node = parse_filter(case.spec)
        want = sorted(i for i, _, p in FILTER_CORPUS if evaluate(node, p))
        where, _ = translate(node)
        rows, _ = engine.scroll(where, 1000, None)
        got = sorted(str(r.id) for r in rows)
        if got != want:
            problems.append(f"{case.name}: {len(got)} vs {len(want)}")
    assert not problems, problems
