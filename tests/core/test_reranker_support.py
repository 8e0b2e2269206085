"""PairScoringReranker: the reranker contract written once over ``_scores``
(:mod:`memoweave.providers.reranker_support`)."""

from __future__ import annotations

import math

import pytest

from memoweave.errors import RerankerError, ValidationError
from memoweave.providers.reranker_support import PairScoringReranker


class Overlap(PairScoringReranker):
    """Scores a pair by the words its query and document share (a real, tiny model)."""

    def __init__(self) -> None:
        super().__init__(model="/models/overlap", engine="overlap-engine")
        self.calls: list[list[tuple[str, str]]] = []
        self.released = 0
        self.fail: Exception | None = None
        self.answer: list[float] | None = None

    def _scores(self, pairs: list[tuple[str, str]]) -> list[float]:
        self.calls.append(pairs)
        if self.fail is not None:
            raise self.fail
        if self.answer is not None:
            return self.answer
        return [float(len(set(q.split()) & set(d.split()))) for q, d in pairs]

    def _release(self) -> None:
        self.released += 1


def test_rerank_sorts_by_score_and_score_pairs_gives_the_same_scores() -> None:
    model = Overlap()
    docs = ["tea", "green tea leaves", "green tea", "coffee"]
    out = model.rerank("green tea leaves", docs, top_k=3)
    assert [d.index for d in out] == [1, 2, 0]
    assert [d.text for d in out] == ["green tea leaves", "green tea", "tea"]
    pairs = [("green tea leaves", d) for d in docs]
    assert model.score_pairs(pairs) == [1.0, 3.0, 2.0, 0.0]
    assert model.calls[0] == model.calls[1] == pairs  # the same pairs, the same method


def test_no_documents_or_pairs_score_nothing() -> None:
    model = Overlap()
    assert model.rerank("tea", [], top_k=5) == []
    assert model.score_pairs([]) == []
    assert model.calls == []


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.rerank(None, ["tea"], top_k=1),
        lambda m: m.rerank("tea", "tea", top_k=1),
        lambda m: m.rerank("tea", ["tea", 3], top_k=1),
        lambda m: m.rerank("tea", ["tea"], top_k=0),
        lambda m: m.score_pairs([("tea",)]),
        lambda m: m.score_pairs([("tea", None)]),
    ],
)
def test_bad_input_is_refused_before_the_model_runs(call: object) -> None:
    model = Overlap()
    with pytest.raises(ValidationError):
        call(model)  # type: ignore[operator]
    assert model.calls == []


def test_a_failure_of_the_model_is_a_reranker_error_naming_engine_and_model() -> None:
    model = Overlap()
    model.fail = RuntimeError("out of memory")
    with pytest.raises(RerankerError) as caught:
        model.score_pairs([("tea", "tea")])
    assert "overlap-engine failed to score 1 pairs: out of memory" in str(caught.value)
    assert caught.value.details["model"] == "/models/overlap"
    assert isinstance(caught.value.__cause__, RuntimeError)
    model.fail = RerankerError("already typed", hint="as raised")
    with pytest.raises(RerankerError, match="already typed"):
        model.rerank("tea", ["tea"], top_k=1)


@pytest.mark.parametrize("answer", [[1.0], [1.0, 2.0, 3.0], [1.0, math.nan], [math.inf, 0.0]])
def test_a_score_count_or_value_the_contract_cannot_use_is_refused(answer: list[float]) -> None:
    model = Overlap()
    model.answer = answer
    with pytest.raises(RerankerError, match="2 pairs"):
        model.score_pairs([("tea", "tea"), ("tea", "cake")])


def test_close_releases_once_and_later_calls_are_refused() -> None:
    model = Overlap()
    model.close()
    model.close()
    assert model.released == 1
    with pytest.raises(RerankerError, match="closed"):
        model.rerank("tea", ["tea"], top_k=1)
    with pytest.raises(RerankerError, match="closed"):
        model.score_pairs([("tea", "tea")])
    assert model.calls == []
