"""parse_scores: every accepted answer shape and every rejection (pure function, no model)."""

from __future__ import annotations

import pytest
from memoweave_llm_reranker.parsing import UnusableAnswer, parse_scores


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ('{"scores": [3, 9, 0]}', [3.0, 9.0, 0.0]),
        ("[3, 9.5, 0]", [3.0, 9.5, 0.0]),
        ('```json\n{"scores": [1, 2, 3]}\n```', [1.0, 2.0, 3.0]),
        ('Sure! Here you go: {"scores": [7, 1, 4]} Hope it helps.', [7.0, 1.0, 4.0]),
        ('{"scores": ["8", "2", "5.5"]}', [8.0, 2.0, 5.5]),
        ('{"scores": [{"id": 2, "score": 9}, {"id": 1, "score": 4}, {"id": 3, "score": 0}]}',
         [4.0, 9.0, 0.0]),
        ('[{"index": 0, "relevance": 1}, {"index": 1, "relevance": 5}, '
         '{"index": 2, "relevance": 2}]', [1.0, 5.0, 2.0]),
        ('{"1": 6, "2": 0, "3": 10}', [6.0, 0.0, 10.0]),
        ('{"scores": {"[1]": 2, "[2]": 3, "[3]": 1}}', [2.0, 3.0, 1.0]),
    ],
)  # fmt: skip
def test_accepted_answers(answer: str, expected: list[float]) -> None:
    assert parse_scores(answer, 3) == expected


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "empty"),
        ("I think document 2 is best.", "no JSON"),
        ('{"scores": [1, 2]}', "expected 3 scores, got 2"),
        ('{"scores": [1, 2, 3, 4]}', "expected 3 scores, got 4"),
        ('{"scores": [1, "high", 3]}', "not a number"),
        ('{"scores": [1, true, 3]}', "boolean"),
        ('{"scores": [1, NaN, 3]}', "not finite"),
        ('{"1": 6, "2": 0}', "ids 1..3"),
        ('{"1": 6, "1 ": 0, "3": 1}', "ids 1..3"),
        ('[{"id": 1}, {"id": 2}, {"id": 3}]', "without id and score"),
        ('{"best": "doc one", "x": 1, "y": 2}', "not a number"),
        ('"just a string"', "got str"),
        ('{"scores": [1, 2, 3', "no JSON"),
    ],
)
def test_rejected_answers_say_why(answer: str, reason: str) -> None:
    with pytest.raises(UnusableAnswer, match=reason):
        parse_scores(answer, 3)
