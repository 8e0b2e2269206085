"""The cosine of keyword-only hits: within ~1e-15 of the correctly rounded definition
(two norms and a distance), the definition itself for norms far apart."""

from __future__ import annotations

import math
import random

import pytest

from memoweave.retrieval.dense import query_cosines


def definition(a: list[float], b: list[float]) -> float:
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return dot / norms if norms > 0 else 0.0


def test_query_cosines_match_the_definition() -> None:
    rng = random.Random(7)
    query = [rng.gauss(0, 1) for _ in range(384)]
    vectors = {f"m{i}": [rng.gauss(0, 1) for _ in range(384)] for i in range(50)}
    # near the query, opposite to it, and nearly so, at norms up to the 4x bound
    for k, scale in enumerate((1.0, 0.26, 3.9, 1e-3, 1e3)):
        vectors[f"near{k}"] = [(x + rng.gauss(0, 0.01)) * scale for x in query]
        vectors[f"far{k}"] = [(-x + rng.gauss(0, 0.001)) * scale for x in query]
    vectors["opposite"] = [-x for x in query]
    vectors["same"] = list(query)
    got = query_cosines(query, vectors)
    for memory_id, vector in vectors.items():
        assert abs(got[memory_id] - definition(query, vector)) <= 1e-14 * math.sqrt(384)
    assert got["opposite"] == pytest.approx(-1.0)
    assert got["same"] == pytest.approx(1.0)


def test_norms_far_apart_take_the_definition_exactly() -> None:
    rng = random.Random(8)
    query = [rng.gauss(0, 1) for _ in range(64)]
    vectors = {
        f"{scale}": [(x + rng.gauss(0, 0.3)) * scale for x in query]
        for scale in (1e-200, 1e-6, 0.2, 5.0, 1e6, 1e200)
    }
    got = query_cosines(query, vectors)
    assert got == {i: definition(query, v) for i, v in vectors.items()}


def test_vectors_that_cannot_be_compared() -> None:
    got = query_cosines([1.0, 0.0], {"zero": [0.0, 0.0], "short": [1.0], "same": [2.0, 0.0]})
    assert got == {"zero": 0.0, "short": None, "same": 1.0}
    assert query_cosines([], {"a": [1.0]}) == {"a": None}
    assert query_cosines([0.0, 0.0], {"a": [1.0, 1.0]}) == {"a": 0.0}
    assert query_cosines([], {"a": []}) == {"a": None}
    assert query_cosines([1.0], {"a": [1.0, 2.0]}) == {"a": None}
