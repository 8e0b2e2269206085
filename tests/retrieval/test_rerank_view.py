"""What the reranker reads: a first-person query and the fact memories rewritten about
"the user" (:mod:`memoweave.retrieval.rerank_view`); other queries, chat turns and the
results themselves unchanged."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from memoweave.providers.reranker import RankedDocument, Reranker, ranked
from memoweave.retrieval.rerank_view import (
    first_person,
    names_in,
    rerank_view,
    user_fact,
    user_query,
)

from .conftest import BuildMemory, add_texts


class RecordingReranker(Reranker):
    """Scores documents by length (probabilities) and records what it was given."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[str]]] = []

    @property
    def scores_are_probabilities(self) -> bool:
        return True

    def rerank(self, query: str, documents: Sequence[str], top_k: int) -> list[RankedDocument]:
        self.seen.append((query, list(documents)))
        return ranked(documents, [len(d) / 100 for d in documents], top_k)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What's my job?", "What's the user's job?"),
        ("How do I get to work?", "How does the user get to work?"),
        ("Am I allergic to anything?", "is the user allergic to anything?"),
        ("I'm looking for my keys", "the user is looking for the user's keys"),
        (
            "Which medicine must doctors never give me?",
            "Which medicine must doctors never give the user?",
        ),
        ("Have I ever been to Japan?", "has the user ever been to Japan?"),
    ],
)
def test_first_person_queries_are_about_the_user(query: str, expected: str) -> None:
    assert first_person(query)
    assert user_query(query) == expected


@pytest.mark.parametrize(
    "query",
    ["What does Kwame do for a living?", "When did Caroline go hiking?", "", "¿Dónde vive?"],
)
def test_other_queries_and_their_texts_pass_unchanged(query: str) -> None:
    texts = ["Works as a nurse", "Her sister lives in Tokyo"]
    assert not first_person(query)
    assert rerank_view(query, texts, [True, True]) == (query, texts)


def test_facts_get_the_user_as_their_subject() -> None:
    names = names_in(["What is my partner called?", "Partner is Sam", "Met Sam in Leeds"])
    assert "Sam" in names and "Partner" not in names and "Met" not in names
    assert user_fact("Works as a nurse at Leeds General Infirmary", names) == (
        "The user works as a nurse at Leeds General Infirmary"
    )
    assert user_fact("Her thesis is about coral", names) == "The user's thesis is about coral"
    assert user_fact("She dives", names) == "The user dives"
    assert user_fact("I like tea with my mum", names) == "The user like tea with the user's mum"
    assert user_fact("Sam's band plays on Fridays", names) == "Sam's band plays on Fridays"
    assert user_fact("Kwame's restaurant opened in 2021", names) == (
        "Kwame's restaurant opened in 2021"  # a capitalised possessive: a name
    )
    assert user_fact("", names) == ""
    assert user_fact("   ", names) == "   "


@pytest.mark.parametrize(
    ("fact", "view"),
    [
        ("Grew up in Kochi", "The user grew up in Kochi"),
        ("Usually does night shifts", "The user usually does night shifts"),
        ("Doesn't eat beef", "The user doesn't eat beef"),
        ("Studied nursing in Leeds", "The user studied nursing in Leeds"),
        ("Planning a trip to Japan", "The user is planning a trip to Japan"),
        ("Name is Alex", "The user's name is Alex"),
        ("Favourite film is Alien", "The user's favourite film is Alien"),
        ("Older sister Anjali is a dentist", "The user's older sister Anjali is a dentist"),
        ("Family lives in Kochi", "The user's family lives in Kochi"),
        ("Allergic to peanuts", "The user's allergic to peanuts"),
    ],
)
def test_a_fact_without_subject_gets_one_that_fits_its_first_word(fact: str, view: str) -> None:
    """A verb gets "The user", a participle "The user is", a noun or adjective "The
    user's" ("The user partner is called Sam" is not English)."""
    assert user_fact(fact, frozenset()) == view


def test_only_facts_are_rewritten() -> None:
    query, texts = rerank_view(
        "What is my job?", ["Works as a nurse", "Alice: I work nights"], [True, False]
    )
    assert query == "What is the user's job?"
    assert texts == ["The user works as a nurse", "Alice: I work nights"]


def test_rerank_view_needs_one_flag_per_text() -> None:
    with pytest.raises(ValueError):
        rerank_view("What is my job?", ["Works as a nurse"], [])


def test_the_reranker_reads_the_view_and_results_keep_the_stored_text(
    build_memory: BuildMemory,
) -> None:
    reranker = RecordingReranker()
    memory = build_memory(retrieval={"rerank_top_n": 5, "answer_check": False}, reranker=reranker)
    texts = ["Works as a nurse at the city hospital", "Her cat is called Biscuit"]
    add_texts(memory, texts)
    memory.add(
        [{"role": "user", "content": "I work nights at the hospital", "name": "Alice"}],
        user_id="alice",
        infer=False,
    )
    hits = memory.search("What is my job?", user_id="alice", rerank=True)["results"]
    query, seen = reranker.seen[-1]
    assert query == "What is the user's job?"
    assert "The user works as a nurse at the city hospital" in seen
    assert "The user's cat is called Biscuit" in seen
    assert any("I work nights" in s for s in seen)  # a turn: as it was said
    stored = {h["memory"] for h in hits}
    assert set(texts) <= stored and not any(m.startswith("The user") for m in stored)
    memory.search("What does Alice do?", user_id="alice", rerank=True)
    assert set(texts) <= set(reranker.seen[-1][1]) and reranker.seen[-1][0] == "What does Alice do?"


def test_a_fact_read_about_the_user_gets_the_stages_offset(build_memory: BuildMemory) -> None:
    """The cross-encoder scores a view about "the user" lower than a fact naming its
    subject: the reranked stage adds ``about_user`` to such a fact's logit, and says so."""
    from memoweave.retrieval.profiles import PROFILES

    from .test_rerank_fusion import stage_score

    reranker = RecordingReranker()
    memory = build_memory(retrieval={"rerank_top_n": 5, "answer_check": False}, reranker=reranker)
    texts = ["Works as a nurse at the city hospital", "Sam's band plays on Fridays"]
    add_texts(memory, texts)
    query = "What is my job?"
    first = {h["memory"]: h["score"] for h in memory.search(query, user_id="alice")["results"]}
    hits = memory.search(query, user_id="alice", rerank=True, explain=True)["results"]
    explain = {h["memory"]: h["explain"] for h in hits}
    score = {h["memory"]: h["score"] for h in hits}
    about = explain[texts[0]]["about_user"]
    assert about["score"] == about["value"] == 1.0
    offset = PROFILES["fact"].reranked.about_user
    assert offset > 0
    base = stage_score(first[texts[0]], explain[texts[0]]["rerank"])
    expected = 1 / (1 + math.exp(-(math.log(base / (1 - base)) + offset)))
    assert score[texts[0]] == pytest.approx(expected)
    assert "about_user" not in explain[texts[1]]  # it names its subject
    assert score[texts[1]] == pytest.approx(
        stage_score(first[texts[1]], explain[texts[1]]["rerank"])
    )
    assert sum(s["contribution"] for s in explain[texts[0]].values()) == pytest.approx(
        score[texts[0]]
    )
    third = memory.search("What does Sam play?", user_id="alice", rerank=True, explain=True)
    assert not any("about_user" in h["explain"] for h in third["results"])
