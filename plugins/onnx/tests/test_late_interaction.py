"""The ``onnx-colbert`` reranker on the real packaged answerai-colbert-small-v1 (int8):
rescaled MaxSim scores, its model folder, and what it changes in a search."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memoweave_onnx._resources import cross_encoder_dir, late_interaction_dir

from memoweave import Memory
from memoweave.errors import ConfigError, RerankerError
from memoweave.plugins import load_registry
from memoweave.providers.reranker import Reranker

QUERY = "What does John want to do after his basketball career?"
FACTS = [
    "John loves his basketball career and finds it challenging and fulfilling.",
    "John is focusing on improving his shooting and making a greater impact on the court.",
    "John's number one goal is to win a championship in basketball.",
    "John plans to use his platform post-basketball to make a positive difference, "
    "potentially by starting a foundation.",
    "John got an amazing deal with an outdoor gear company last week.",
    "John started surfing five years ago.",
]
ANSWER = FACTS[3]


def _reranker(**config: object) -> Reranker:
    return load_registry().create("reranker", "onnx-colbert", dict(config))


@pytest.fixture(scope="module")
def late() -> Iterator[Reranker]:
    provider = _reranker()
    yield provider
    provider.close()


def test_scores_are_maxsim_rescaled_from_the_floor(late: Reranker) -> None:
    raw = _reranker(similarity_floor=0.0)
    try:
        maxsim = raw.score_pairs([(QUERY, fact) for fact in FACTS])
    finally:
        raw.close()
    scores = late.score_pairs([(QUERY, fact) for fact in FACTS])
    assert late.scores_are_similarities and not late.scores_are_probabilities
    for got, similarity in zip(scores, maxsim, strict=True):
        assert 0.0 < similarity < 1.0
        assert got == pytest.approx(max(0.0, (similarity - 0.6) / 0.4), abs=1e-6)


def test_the_answer_outscores_a_fact_sharing_only_the_topic(late: Reranker) -> None:
    scores = late.score_pairs([(QUERY, ANSWER), (QUERY, FACTS[4]), (QUERY, FACTS[5])])
    assert scores[0] > max(scores[1:])


def test_search_with_the_late_interaction_stage_lifts_the_paraphrase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranks = []
    for late in (False, True):
        monkeypatch.setenv("MEMOWEAVE_HOME", str(tmp_path / str(late)))  # the embedded stack
        config = {"reranker": {"provider": "onnx-colbert"}} if late else {}
        with Memory(config) as memory:
            for fact in FACTS:
                memory.add(fact, user_id="john", infer=False)
            results = memory.search(QUERY, user_id="john", rerank=late, explain=True)["results"]
        ranks.append([h["memory"] for h in results].index(ANSWER))
        if late:
            assert all(0.0 <= h["explain"]["rerank"]["value"] <= 1.0 for h in results)
    assert ranks[1] < ranks[0]


def test_a_model_dir_folder_loads_and_a_bad_one_is_a_reranker_error(tmp_path: Path) -> None:
    model, tokenizer = late_interaction_dir(None)
    folder = tmp_path / "colbert"
    (folder / "onnx").mkdir(parents=True)
    shutil.copy(model, folder / "onnx" / "model.onnx")
    shutil.copy(tokenizer, folder / "tokenizer.json")
    provider = _reranker(model_dir=str(folder))
    assert provider.rerank(QUERY, FACTS, 1)[0].text in FACTS
    provider.close()
    (folder / "tokenizer.json").unlink()
    with pytest.raises(RerankerError) as info:
        _reranker(model_dir=str(folder))
    assert "tokenizer.json" in info.value.message and "model_dir" in info.value.hint
    with pytest.raises(RerankerError) as info:
        _reranker(model_dir=str(tmp_path / "nothing here"))
    assert info.value.details["reason"] == "missing_model"


def test_a_cross_encoder_is_not_taken_for_a_token_encoder() -> None:
    folder = cross_encoder_dir(None)[0].parent  # one relevance logit per pair
    with pytest.raises(RerankerError) as info:
        _reranker(model_dir=str(folder))
    assert "token states" in info.value.message and info.value.details["reason"] == "bad_model"


def test_a_closed_reranker_raises() -> None:
    provider = _reranker()
    provider.close()
    with pytest.raises(RerankerError):
        provider.rerank(QUERY, FACTS, 1)


@pytest.mark.parametrize(
    "bad", [{"similarity_floor": 1.0}, {"batch_size": 0}, {"max_length": 4}, {"oops": 1}]
)
def test_bad_config_is_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        _reranker(**bad)


class CountingSession:
    """The provider's onnxruntime session, counting the memories it encodes."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.rows = 0

    def run(self, outputs: Any, feed: dict[str, Any]) -> Any:
        self.rows += len(feed["input_ids"])
        return self.session.run(outputs, feed)


def test_a_memory_scored_again_is_not_encoded_again() -> None:
    provider = _reranker()
    counting = provider._session = CountingSession(provider._session)  # type: ignore[attr-defined]
    try:
        first = provider.score_pairs([(QUERY, fact) for fact in FACTS])
        assert counting.rows == 1 + len(FACTS)  # the query, then each fact
        again = provider.score_pairs([(QUERY, fact) for fact in FACTS] + [(QUERY, FACTS[0])])
        assert counting.rows == 2 + len(FACTS)  # the query only
        assert again == [*first, first[0]]
    finally:
        provider.close()


def test_the_cache_keeps_the_last_memories_and_changes_no_score() -> None:
    uncached, small = _reranker(cache_size=0), _reranker(cache_size=2)
    try:
        want = uncached.score_pairs([(QUERY, fact) for fact in FACTS])
        assert small.score_pairs([(QUERY, fact) for fact in FACTS]) == want
        assert list(small._cache) == FACTS[-2:]  # type: ignore[attr-defined]
        assert not uncached._cache  # type: ignore[attr-defined]
        small.close()
        assert not small._cache  # type: ignore[attr-defined]
    finally:
        uncached.close()
        small.close()


def test_the_late_interaction_section_and_the_cross_encoder_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMOWEAVE_HOME", str(tmp_path))
    config = {"late_interaction": {"provider": "onnx-colbert"}, "reranker": {"provider": "onnx"}}
    with Memory(config) as memory:
        for fact in FACTS:
            memory.add(fact, user_id="john", infer=False)
        plain = memory.search(QUERY, user_id="john", explain=True)["results"]
        both = memory.search(QUERY, user_id="john", rerank=True, explain=True)["results"]
    assert all("late" in h["explain"] and "rerank" not in h["explain"] for h in plain)
    assert all({"late", "rerank"} <= set(h["explain"]) for h in both)
    assert [h["memory"] for h in plain].index(ANSWER) <= 2
    with pytest.raises(ConfigError) as info:
        Memory({"late_interaction": {"provider": "onnx"}})  # a cross-encoder: probabilities
    assert info.value.details["path"] == "late_interaction.provider"
