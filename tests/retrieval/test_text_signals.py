"""Tokenisation, entity extraction, time expressions and fusion arithmetic."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest

from memoweave.index.entities import extract_entities
from memoweave.index.tokenize import tokenize
from memoweave.retrieval.candidates import Candidate, Signal
from memoweave.retrieval.fusion import fuse_calibrated, fuse_rrf, signal_value
from memoweave.retrieval.temporal import recency_score, time_score, time_windows

NOW = datetime(2024, 3, 15, 12, 0, tzinfo=timezone.utc)


def _day(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).date().isoformat()


def test_english_tokens_are_lemmas_without_stop_words() -> None:
    assert tokenize("The kids were painting sunrises; we went camping!") == [
        "kid",
        "paint",
        "sunrise",
        "go",
        "camp",
    ]
    assert tokenize("When did Melanie paint a sunrise?") == ["melanie", "paint", "sunrise"]


def test_cjk_text_becomes_character_bigrams() -> None:
    assert tokenize("我喜欢北京") == ["我喜", "喜欢", "欢北", "北京"]
    assert tokenize("寿司") == ["寿司"]
    assert tokenize("猫") == ["猫"]
    mixed = tokenize("東京でsushiを食べた")
    assert sorted(mixed) == sorted(["東京", "京で", "sushi", "を食", "食べ", "べた"])


def test_entities_cover_names_titles_numbers_and_dates() -> None:
    found = extract_entities(
        'Melanie: Wow, I read "Nothing is Impossible" in New York on 8 May, 2023 at 18.'
    )
    assert {"melanie", "nothing is impossible", "new york", "new", "york", "18"} <= set(found)
    assert {"may", "may 2023", "2023"} <= set(found)
    assert "wow" not in found and "i" not in found


def test_question_words_are_not_entities_but_names_are() -> None:
    assert extract_entities("When did Caroline's friend visit Dr. Seuss House?") == (
        "caroline",
        "dr seuss house",
        "dr",
        "seuss",
        "house",
    )
    assert extract_entities("What is up?") == ()
    assert extract_entities("") == ()
    assert extract_entities("我喜欢北京") == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What did she paint on October 13, 2023?", [("2023-10-13", "2023-10-14")]),
        ("What did Gina find on 1 February, 2023?", [("2023-02-01", "2023-02-02")]),
        ("notes from 2023-05-08", [("2023-05-08", "2023-05-09")]),
        ("Where did he work in December 2022?", [("2022-12-01", "2023-01-01")]),
        ("camping in June", [("2023-06-01", "2023-07-01")]),
        ("camping in February", [("2024-02-01", "2024-03-01")]),
        ("trips in 2021", [("2021-01-01", "2022-01-01")]),
        ("what happened last year", [("2023-01-01", "2024-01-01")]),
        ("what happened last month", [("2024-02-01", "2024-03-01")]),
        ("what happened yesterday", [("2024-03-14", "2024-03-15")]),
        ("what happened last weekend", [("2024-03-09", "2024-03-11")]),
    ],
)
def test_time_windows(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(_day(w.start), _day(w.end)) for w in time_windows(text, NOW)] == expected


def test_no_time_named_means_no_window() -> None:
    assert time_windows("What does Melanie like? She may go.", NOW) == []
    assert time_windows("", NOW) == []


def test_time_score_is_one_inside_and_decays_outside() -> None:
    (window,) = time_windows("on May 3, 2023", NOW)
    inside = window.start + 3600
    near, far = window.end + 86_400, window.end + 30 * 86_400
    assert time_score(inside, [window]) == 1.0
    assert 0 < time_score(far, [window]) < time_score(near, [window]) < 1.0
    assert time_score(None, [window]) == 0.0
    assert time_score(inside, []) == 0.0


def test_recency_halves_every_half_life() -> None:
    assert recency_score(NOW.timestamp(), NOW, 30) == 1.0
    assert recency_score(NOW.timestamp() - 30 * 86_400, NOW, 30) == pytest.approx(0.5)
    assert recency_score(None, NOW, 30) == 0.0


def _cands() -> dict[str, Candidate]:
    a = Candidate("a", {}, {"dense": Signal(0.9, rank=1), "keyword": Signal(2.0, rank=2)})
    b = Candidate("b", {}, {"dense": Signal(0.5, rank=2), "keyword": Signal(6.0, rank=1)})
    c = Candidate("c", {}, {"keyword": Signal(1.0, rank=3), "entity": Signal(0.5, rank=1)})
    return {x.id: x for x in (a, b, c)}


def test_signal_values_are_fixed_transforms_of_the_raw_scores() -> None:
    assert signal_value("dense", Signal(0.62), keyword_ceiling=8.0) == pytest.approx(0.62)
    assert signal_value("dense", Signal(-0.2), keyword_ceiling=8.0) == 0.0
    assert signal_value("keyword", Signal(2.0), keyword_ceiling=8.0) == pytest.approx(0.25)
    assert signal_value("keyword", Signal(3.0), keyword_ceiling=None) == pytest.approx(0.75)
    assert signal_value("entity", Signal(0.4), keyword_ceiling=None) == pytest.approx(0.4)


def test_a_calibrated_score_does_not_depend_on_the_other_candidates() -> None:
    weights, bias = {"dense": 6.0, "keyword": 10.0, "entity": 2.0}, -8.0
    alone = Candidate("a", {}, {"dense": Signal(0.9, 0.9), "keyword": Signal(2.0, 0.25)})
    fuse_calibrated(alone, weights, bias)
    pool = _cands()
    for name, value in (("dense", 0.9), ("keyword", 0.25)):
        pool["a"].signals[name].value = value
    for cand in pool.values():
        fuse_calibrated(cand, weights, bias)
    assert pool["a"].score == pytest.approx(alone.score)
    assert alone.score == pytest.approx(1 / (1 + math.exp(-(bias + 6.0 * 0.9 + 10.0 * 0.25))))
    for cand in pool.values():
        assert sum(s.contribution for s in cand.signals.values()) == pytest.approx(cand.score)


def test_rrf_fusion_tops_out_at_one() -> None:
    cands = _cands()
    fuse_rrf(cands, {"dense": 1.0, "keyword": 1.0, "entity": 0.0}, rrf_k=60)
    assert cands["a"].score == pytest.approx((61 / 61 + 61 / 62) / 2)
    assert cands["c"].signals["entity"].contribution == 0.0
    only = {"x": Candidate("x", {}, {"dense": Signal(0.1, rank=1), "keyword": Signal(0.1, rank=1)})}
    fuse_rrf(only, {"dense": 1.0, "keyword": 1.0}, rrf_k=60)
    assert only["x"].score == pytest.approx(1.0)
