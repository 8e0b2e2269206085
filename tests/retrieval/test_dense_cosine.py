"""The cosine of keyword-only hits: exactly the correctly rounded definition, the query's
norm computed once."""

from __future__ import annotations

import math
import random

import pytest

from memoweave.retrieval.dense import query_cosines


def definition(a: list[float], b: list[float]) -> float:
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return dot / norms if norms > 0 else 0.0


def test_query_cosines_equal_the_definition_exactly() -> None:
    rng = random.Random(7)
    query = [rng.gauss(0, 1) for _ in range(384)]
    vectors = {f"m{i}": [rng.gauss(0, 1) for _ in range(384)] for i in range(50)}
    vectors["opposite"] = [-x for x in query]
    got = query_cosines(query, vectors)
    assert got == {i: definition(query, v) for i, v in vectors.items()}
    assert got["opposite"] == pytest.approx(-1.0)


def test_vectors_that_cannot_be_compared() -> None:
    got = query_cosines([1.0, 0.0], {"zero": [0.0, 0.0], "short": [1.0], "same": [2.0, 0.0]})
    assert got == {"zero": 0.0, "short": None, "same": 1.0}
    assert query_cosines([], {"a": [1.0]}) == {"a": None}
    assert query_cosines([0.0, 0.0], {"a": [1.0, 1.0]}) == {"a": 0.0}
    assert query_cosines([], {"a": []}) == {"a": None}
    assert query_cosines([1.0], {"a": [1.0, 2.0]}) == {"a": None}
