"""The answer check (:mod:`memoweave.retrieval.answer_check`): the reranker asked again
without each query word the first fact lacks; a word whose removal raises its score
lowers every score of the search by the same logit shift, the order kept."""

from __future__ import annotations

import math

import pytest

from memoweave.memory import Memory
from memoweave.retrieval.answer_check import MAX_WORDS, ablated_queries, check_value
from memoweave.retrieval.profiles import PROFILES

from .conftest import BuildMemory, add_texts
from .test_rerank_fusion import ANSWER, NO_CHECK, QUERY, TEXTS, WordsReranker
from .test_rerank_fusion import api as api  # both Memory and AsyncMemory

COVERED = "Which goldfish does Bob keep?"
"""Every content word is in the answer ("keep" / "keeps"): nothing to check."""


def _checked_and_plain(build_memory: BuildMemory) -> tuple[WordsReranker, Memory, Memory]:
    """The checked memory's reranker, and two memories of TEXTS: checked and unchecked."""
    reranker = WordsReranker(probabilities=True)
    checked = build_memory(retrieval={"rerank_top_n": 5}, reranker=reranker)
    plain = build_memory(retrieval={"rerank_top_n": 5, **NO_CHECK}, reranker=WordsReranker(True))
    for memory in (checked, plain):
        add_texts(memory, TEXTS)
    return reranker, checked, plain


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def test_the_query_loses_each_content_word_the_memory_lacks() -> None:
    assert ablated_queries(
        "What is Tomás's favourite film?", "Tomás's favourite band is Radiohead"
    ) == ["What is Tomás's favourite?"]
    # stop words and short words stay; a shared lemma ("keeps" / "keep") stays
    assert ablated_queries(COVERED, ANSWER) == []
    assert ablated_queries(QUERY, ANSWER) == [
        "What are the of Bob's fish?",
        "What are the names of Bob's?",
    ]
    many = " ".join(f"word{i}" for i in range(20)) + "?"
    assert len(ablated_queries(many, "nothing shared")) == MAX_WORDS


def test_the_value_sums_the_rises_the_removed_words_give() -> None:
    assert check_value(0.9, []) == 0.0
    assert check_value(0.9, [0.5, 0.2]) == 0.0  # every word counted for the memory
    both = (_logit(0.5) - _logit(0.8)) + (_logit(0.5) - _logit(0.6))
    assert check_value(0.5, [0.8, 0.6]) == pytest.approx(both)
    assert check_value(0.5, [0.8, 0.3]) == pytest.approx(_logit(0.5) - _logit(0.8))  # a fall adds 0
    assert check_value(0.5, [0.8, 0.6]) < check_value(0.5, [0.8]) < 0


def test_a_missed_word_lowers_every_score_by_one_shift_and_keeps_the_order(
    build_memory: BuildMemory,
) -> None:
    reranker, checked, plain = _checked_and_plain(build_memory)
    before = plain.search(QUERY, user_id="alice", explain=True, rerank=True)["results"]
    hits = checked.search(QUERY, user_id="alice", explain=True, rerank=True)["results"]
    assert reranker.calls == [5, 1, 1]  # the stage, then one pair per missing word
    assert [h["memory"] for h in hits] == [h["memory"] for h in before] and hits[0][
        "memory"
    ] == ANSWER
    weight = PROFILES["fact"].reranked.answer_check
    value = hits[0]["explain"]["answer_check"]["score"]
    assert value < 0
    for hit, old in zip(hits, before, strict=True):
        check = hit["explain"]["answer_check"]
        assert check["score"] == value and check["value"] == pytest.approx(weight * value)
        assert _logit(hit["score"]) == pytest.approx(_logit(old["score"]) + weight * value)
        assert sum(s["contribution"] for s in hit["explain"].values()) == pytest.approx(
            hit["score"]
        )
    cut = (hits[0]["score"] + before[0]["score"]) / 2  # between the checked and unchecked score
    assert checked.search(QUERY, user_id="alice", rerank=True, threshold=cut)["results"] == []
    assert plain.search(QUERY, user_id="alice", rerank=True, threshold=cut)["results"]


def test_a_question_the_first_fact_covers_keeps_its_scores(build_memory: BuildMemory) -> None:
    reranker, checked, plain = _checked_and_plain(build_memory)
    hits = checked.search(COVERED, user_id="alice", explain=True, rerank=True)["results"]
    before = plain.search(COVERED, user_id="alice", rerank=True)["results"]
    assert reranker.calls == [5] and hits[0]["memory"] == ANSWER
    assert [(h["memory"], h["score"]) for h in hits] == [(h["memory"], h["score"]) for h in before]
    assert not any("answer_check" in h["explain"] for h in hits)


def test_no_check_when_off_for_turns_or_without_probabilities(build_memory: BuildMemory) -> None:
    off = WordsReranker(probabilities=True)
    memory = build_memory(retrieval=NO_CHECK, reranker=off)
    add_texts(memory, TEXTS)
    memory.search(QUERY, user_id="alice", rerank=True)
    assert off.calls == [5]
    own_scale = WordsReranker(probabilities=False)
    memory = build_memory(reranker=own_scale)
    add_texts(memory, TEXTS)
    memory.search(QUERY, user_id="alice", rerank=True)
    assert own_scale.calls == [5]
    turns = WordsReranker(probabilities=True)
    memory = build_memory(reranker=turns)
    for text in TEXTS:  # chat turns: the turn profile does not weigh the check
        memory.add([{"role": "user", "content": text}], user_id="alice", infer=False)
    hits = memory.search(QUERY, user_id="alice", rerank=True, explain=True)["results"]
    assert turns.calls == [5] and not any("answer_check" in h["explain"] for h in hits)
