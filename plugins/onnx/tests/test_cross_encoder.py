"""The ``onnx`` reranker on the real packaged ms-marco-MiniLM-L-12-v2 (int8) cross-encoder."""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memoweave_onnx._resources import cross_encoder_dir, model_file

from memoweave import Memory
from memoweave.errors import ConfigError, RerankerError
from memoweave.plugins import load_registry
from memoweave.providers.reranker import Reranker
from memoweave.retrieval.profiles import RECOMMENDED_RERANKED_THRESHOLD

QUERY = "What do I do for work?"
DOCS = [
    "Oat porridge with bananas worked well before the long run.",
    "Works as a data analyst at a logistics startup called Frota.",
    "Has a cat called Miso.",
]


def _reranker(**config: object) -> Reranker:
    return load_registry().create("reranker", "onnx", dict(config))


@pytest.fixture(scope="module")
def cross_encoder() -> Iterator[Reranker]:
    provider = _reranker()
    yield provider
    provider.close()


def test_the_memory_a_question_is_about_beats_one_sharing_a_word(
    cross_encoder: Reranker,
) -> None:
    ranked = cross_encoder.rerank(QUERY, DOCS, 3)
    assert [r.index for r in ranked] == [1, 0, 2]
    assert ranked[0].score > 50 * ranked[1].score  # logits about -4.3 vs -9.0
    assert all(0.0 <= r.score <= 1.0 for r in ranked)


def test_raw_logits_are_the_probabilities_before_the_sigmoid(cross_encoder: Reranker) -> None:
    probabilities = {r.index: r.score for r in cross_encoder.rerank(QUERY, DOCS, 3)}
    raw = _reranker(activation="none")
    try:
        logits = {r.index: r.score for r in raw.rerank(QUERY, DOCS, 3)}
    finally:
        raw.close()
    for i, logit in logits.items():
        assert 1 / (1 + math.exp(-logit)) == pytest.approx(probabilities[i], abs=1e-6)


def test_with_batch_size_one_a_score_depends_on_its_pair_alone() -> None:
    single = _reranker(batch_size=1)
    try:
        together = {r.index: r.score for r in single.rerank(QUERY, DOCS, 3)}
        alone = {i: single.rerank(QUERY, [doc], 1)[0].score for i, doc in enumerate(DOCS)}
    finally:
        single.close()
    assert together == alone


def test_a_model_dir_folder_loads_and_a_bad_one_is_a_reranker_error(tmp_path: Path) -> None:
    model, tokenizer = cross_encoder_dir(None)
    folder = tmp_path / "ce"
    (folder / "onnx").mkdir(parents=True)
    shutil.copy(model, folder / "onnx" / "model.onnx")
    shutil.copy(tokenizer, folder / "tokenizer.json")
    provider = _reranker(model_dir=str(folder))
    assert provider.rerank(QUERY, DOCS, 1)[0].index == 1
    provider.close()
    (folder / "tokenizer.json").unlink()
    with pytest.raises(RerankerError) as info:
        _reranker(model_dir=str(folder))
    assert "tokenizer.json" in info.value.message and "model_dir" in info.value.hint


def test_an_embedding_model_is_not_taken_for_a_cross_encoder(tmp_path: Path) -> None:
    _, tokenizer = cross_encoder_dir(None)
    shutil.copy(model_file(None), tmp_path / "model.onnx")  # MiniLM: 384 outputs a token
    shutil.copy(tokenizer, tmp_path / "tokenizer.json")
    with pytest.raises(RerankerError) as info:
        _reranker(model_dir=str(tmp_path))
    assert "single-label" in info.value.message


@pytest.mark.parametrize("bad", [{"max_length": 4}, {"activation": "softmax"}, {"oops": 1}])
def test_bad_config_is_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        _reranker(**bad)


@pytest.mark.parametrize("activation", ["sigmoid", "none"])
def test_search_with_rerank_puts_the_memory_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, activation: str
) -> None:
    monkeypatch.setenv("MEMOWEAVE_HOME", str(tmp_path))  # the embedded default stack
    memory = Memory({"reranker": {"provider": "onnx", "config": {"activation": activation}}})
    try:
        for text in DOCS:
            memory.add(text, user_id="u", infer=False)
        out = memory.search(QUERY, user_id="u", rerank=True, explain=True)["results"]
    finally:
        memory.close()
    assert out[0]["memory"] == DOCS[1]
    assert out[0]["score"] > out[1]["score"]
    if activation == "sigmoid":  # probabilities: fused into memoweave's calibrated score
        for hit in out:
            shares = sum(s["contribution"] for s in hit["explain"].values())
            assert shares == pytest.approx(hit["score"]) and 0 < hit["score"] < 1
            assert 0 <= hit["explain"]["rerank"]["value"] <= 1
    else:  # raw logits: the reranker's own score
        assert out[0]["score"] == out[0]["explain"]["rerank"]["score"]


CHECKED_FACTS = [
    "Marta's favourite band is Arcade Fire",
    "Marta has a tabby cat called Olive",
    "Marta is learning to play the cello",
    "Marta swims in the sea every morning",
]
ANSWERED = {
    "What is Marta's favourite band?": CHECKED_FACTS[0],
    "What pet does Marta have?": CHECKED_FACTS[1],
    "Which instrument is Marta learning?": CHECKED_FACTS[2],
}
UNANSWERED = [  # a fact on the topic, about a neighbouring thing
    "What is Marta's favourite film?",
    "Does Marta have a dog?",
    "Which language is Marta learning?",
    "Where does Marta go running?",
]


def test_the_answer_check_drops_neighbouring_facts_below_the_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real cross-encoder scores a fact about a neighbouring thing (band for film) as
    an answer; the answer check (docs/retrieval.md) brings those searches below the
    recommended reranked threshold and leaves the answered ones as they were."""
    monkeypatch.setenv("MEMOWEAVE_HOME", str(tmp_path))
    first: dict[bool, dict[str, dict[str, Any]]] = {}
    for check in (True, False):
        config = {"reranker": {"provider": "onnx"}, "retrieval": {"answer_check": check}}
        with Memory(config) as memory:
            memory.reset()
            for text in CHECKED_FACTS:
                memory.add(text, user_id="marta", infer=False)
            first[check] = {
                q: memory.search(q, user_id="marta", rerank=True, explain=True)["results"][0]
                for q in [*ANSWERED, *UNANSWERED]
            }
    for question, answer in ANSWERED.items():
        hit = first[True][question]
        assert hit["memory"] == answer and hit["score"] >= RECOMMENDED_RERANKED_THRESHOLD
        assert hit["score"] == pytest.approx(first[False][question]["score"])
    for question in UNANSWERED:
        hit, unchecked = first[True][question], first[False][question]
        assert hit["explain"]["answer_check"]["score"] < 0
        assert hit["score"] < RECOMMENDED_RERANKED_THRESHOLD < unchecked["score"] or (
            hit["score"] < unchecked["score"] < RECOMMENDED_RERANKED_THRESHOLD
        )
