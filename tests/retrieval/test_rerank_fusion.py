"""Reranking: a reranker whose scores are probabilities is fused with the other signals
(calibrated score, shares that add up, ``threshold`` on that score); any other reranker's
own score replaces the fused one."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import pytest

from memoweave.providers.reranker import RankedDocument, Reranker, ranked
from memoweave.retrieval.fusion import RERANK_LOGIT_CEILING, RERANK_LOGIT_FLOOR
from memoweave.retrieval.profiles import PROFILES

from .conftest import BuildMemory, add_texts

TEXTS = [
    "Bob enjoys hiking in the mountains on weekends",
    "Bob drinks green tea every morning",
    "Bob works as a nurse at the city hospital",
    "Bob's sister plays the violin in an orchestra",
    "Bob keeps two goldfish called Salt and Pepper",
]
QUERY = "What are the names of Bob's fish?"
ANSWER = TEXTS[4]
NO_CHECK = {"answer_check": False}
"""The stage alone (the answer check on top of it: test_answer_check.py)."""


@pytest.fixture(params=["sync", "async"])
def api(request: pytest.FixtureRequest) -> str:
    """Both ``Memory`` and ``AsyncMemory`` (the stage runs in the shared pipeline)."""
    return str(request.param)


class WordsReranker(Reranker):
    """Scores a document by the query's longer words it contains (``goldfish`` counts for
    ``fish``): a count of its own, or with ``probabilities`` the share of those words."""

    def __init__(self, probabilities: bool) -> None:
        self.probabilities = probabilities
        self.calls: list[int] = []

    @property
    def scores_are_probabilities(self) -> bool:
        return self.probabilities

    def rerank(self, query: str, documents: Sequence[str], top_k: int) -> list[RankedDocument]:
        self.calls.append(len(documents))
        words = {w for w in re.findall(r"\w+", query.lower()) if len(w) > 3}
        counts = [
            float(sum(any(w in t for t in re.findall(r"\w+", d.lower())) for w in words))
            for d in documents
        ]
        scores = [c / len(words) for c in counts] if self.probabilities else counts
        return ranked(documents, scores, top_k)


def stage_score(first_pass: float, rerank: dict[str, float]) -> float:
    """The reranked stage's score of a fact from its first-pass score and its ``rerank``
    explanation (whose ``value`` is checked against the reranker's raw probability)."""
    stage = PROFILES["fact"].reranked
    logit = math.log(rerank["score"] / (1 - rerank["score"])) if rerank["score"] else -99
    span = RERANK_LOGIT_CEILING - RERANK_LOGIT_FLOOR
    assert rerank["value"] == pytest.approx(min(1.0, max(0.0, (logit - RERANK_LOGIT_FLOOR) / span)))
    z = math.log(first_pass / (1 - first_pass))
    return 1 / (1 + math.exp(-(stage.bias + stage.fused * z + stage.rerank * rerank["value"])))


def test_a_probability_reranker_is_fused_into_a_calibrated_score(
    build_memory: BuildMemory,
) -> None:
    reranker = WordsReranker(probabilities=True)
    memory = build_memory(retrieval={"rerank_top_n": 5, **NO_CHECK}, reranker=reranker)
    add_texts(memory, TEXTS)
    plain = memory.search(QUERY, user_id="alice", explain=True)["results"]
    hits = memory.search(QUERY, user_id="alice", explain=True, rerank=True)["results"]
    assert reranker.calls == [5] and len(hits) == 5
    assert hits[0]["memory"] == ANSWER
    first_pass = {h["id"]: h["score"] for h in plain}
    for hit in hits:
        explain = hit["explain"]
        assert hit["score"] == pytest.approx(stage_score(first_pass[hit["id"]], explain["rerank"]))
        assert sum(s["contribution"] for s in explain.values()) == pytest.approx(hit["score"])
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    cut = hits[1]["score"]
    kept = memory.search(QUERY, user_id="alice", rerank=True, threshold=cut)["results"]
    assert [h["id"] for h in kept] == [h["id"] for h in hits[:2]]


def test_a_reranker_of_its_own_scale_replaces_the_score(build_memory: BuildMemory) -> None:
    memory = build_memory(reranker=WordsReranker(probabilities=False))
    add_texts(memory, TEXTS)
    hits = memory.search(QUERY, user_id="alice", explain=True, rerank=True)["results"]
    assert hits[0]["memory"] == ANSWER
    for rank, hit in enumerate(hits, start=1):
        assert hit["explain"]["rerank"] == {"score": hit["score"], "rank": rank}
    everything = memory.search(QUERY, user_id="alice")["results"]
    cut = everything[1]["score"]  # threshold applies to the fused score, before reranking
    kept = memory.search(QUERY, user_id="alice", rerank=True, threshold=cut)["results"]
    assert {h["id"] for h in kept} == {h["id"] for h in everything[:2]}


def test_results_past_the_reranked_ones_follow_in_fused_order(build_memory: BuildMemory) -> None:
    reranker = WordsReranker(probabilities=True)
    memory = build_memory(retrieval={"rerank_top_n": 2, **NO_CHECK}, reranker=reranker)
    add_texts(memory, TEXTS)
    plain = memory.search(QUERY, user_id="alice", top_k=5)["results"]
    hits = memory.search(QUERY, user_id="alice", top_k=5, rerank=True, explain=True)["results"]
    assert reranker.calls == [2] and len(hits) == 5
    assert {h["id"] for h in hits[:2]} == {h["id"] for h in plain[:2]}
    assert all("rerank" in h["explain"] for h in hits[:2])
    tail = hits[2:]
    assert [(h["id"], h["score"]) for h in tail] == [(h["id"], h["score"]) for h in plain[2:]]
    assert not any("rerank" in h["explain"] for h in tail)
    cut = plain[3]["score"]  # threshold: on each result's own score
    kept = memory.search(QUERY, user_id="alice", top_k=5, rerank=True, threshold=cut)["results"]
    assert [h["id"] for h in kept if h["id"] in {p["id"] for p in plain[2:]}] == [
        h["id"] for h in plain[2:4]
    ]
    assert all(h["score"] >= cut for h in kept)


def test_a_reranker_of_its_own_scale_returns_only_what_it_ranked(
    build_memory: BuildMemory,
) -> None:
    memory = build_memory(retrieval={"rerank_top_n": 2}, reranker=WordsReranker(False))
    add_texts(memory, TEXTS)
    hits = memory.search(QUERY, user_id="alice", top_k=5, rerank=True)["results"]
    assert len(hits) == 2


def test_rerank_top_n_1_rescores_the_first_result_and_keeps_the_order(
    build_memory: BuildMemory,
) -> None:
    """``rerank_top_n: 1`` (docs/retrieval.md, "Reranking"): one pair per search; the
    results are the first pass's, in its order, and only the first one's score is the
    reranked stage's (what ``threshold`` then reads for it)."""
    reranker = WordsReranker(probabilities=True)
    memory = build_memory(retrieval={"rerank_top_n": 1, **NO_CHECK}, reranker=reranker)
    add_texts(memory, TEXTS)
    plain = memory.search(QUERY, user_id="alice", top_k=5, explain=True)["results"]
    hits = memory.search(QUERY, user_id="alice", top_k=5, rerank=True, explain=True)["results"]
    assert reranker.calls == [1]
    assert [h["id"] for h in hits] == [h["id"] for h in plain]
    first = hits[0]
    assert first["score"] == pytest.approx(
        stage_score(plain[0]["score"], first["explain"]["rerank"])
    )
    assert first["score"] != pytest.approx(plain[0]["score"])
    assert [(h["score"], "rerank" in h["explain"]) for h in hits[1:]] == [
        (h["score"], False) for h in plain[1:]
    ]
