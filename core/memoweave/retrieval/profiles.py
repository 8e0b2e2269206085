"""The fitted weights of ``calibrated`` fusion, one profile per kind of memory.

A memory is a ``turn`` (a chat message stored as it was said: ``add(messages,
infer=False)``) or a ``fact`` (distilled by an extraction strategy, or a plain text the
caller passed to ``add``); the write path records which in the payload key
:data:`MEMORY_KIND_KEY` (memories written before it are read as facts). The kinds want
different weights: in long, chatty turns the words a question shares with its answer
(BM25) are the strongest evidence, in short distilled facts the meaning (cosine) is.

Each profile is a logistic model, ``score = sigmoid(bias + sum(weight * value))`` over
the signals' bounded values (:mod:`.fusion`). Ranking weights were chosen on one half of
the development data and checked on the other, then scaled and shifted (Platt scaling)
so that the score of a top result estimates the probability that it is what the query is
about; ``bench/fit_fusion.py`` refits them from captured searches and docs/retrieval.md
gives the data and the figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MEMORY_KIND_KEY = "memory_kind"
"""Payload key of a memory's kind (``"turn"`` or ``"fact"``)."""
KIND_TURN = "turn"
KIND_FACT = "fact"
SIGNALS = ("dense", "keyword", "entity", "time", "recency")
RECOMMENDED_THRESHOLD = 0.18
"""The ``threshold`` docs/retrieval.md recommends for questions that may have no answer:
the cut that keeps the most answers plus drops the most unanswerable questions on the
fact-QA dev personas (checked on the held-out ones, ``bench/fact_qa.py``)."""
RECOMMENDED_RERANKED_THRESHOLD = 0.1
"""The same for ``search(rerank=True)`` with a reranker of probabilities and the answer
check on (``retrieval.answer_check``, :mod:`.answer_check`), chosen the same way."""


@dataclass(frozen=True)
class RerankStage:
    """How a reranker's probability joins the fused score (``search(rerank=True)`` with a
    reranker whose ``scores_are_probabilities``): ``score = sigmoid(bias + fused * z +
    rerank * value)``, ``z`` the first-pass logit (``bias + sum(weight * value)`` of the
    profile) and ``value`` the reranker's bounded value (:func:`.fusion.signal_value`)."""

    bias: float
    fused: float
    rerank: float
    answer_check: float = 0.0
    """Weight of the answer check's value on the logit of every result when the first
    result is of this kind (:mod:`.answer_check`); 0 turns it off."""
    about_user: float = 0.0
    """Added to the logit of a memory the reranker read rewritten about "the user" (a
    first-person query, a fact without a named subject: :mod:`.rerank_view`). The
    cross-encoder scores such a view lower than a fact that names its subject, answers
    and non-answers alike, so without it the same score means more in a scope of
    subject-less facts than in one of named facts."""


@dataclass(frozen=True)
class Profile:
    """Logistic weights of each signal's value, and the bias."""

    bias: float
    dense: float
    keyword: float
    entity: float
    time: float
    recency: float = 0.0
    neighbour: float = 0.0
    """Weight of the neighbour signal (:mod:`.neighbours`: nearby turns, or facts observed
    at the same moment; not a setting)."""
    reranked: RerankStage = RerankStage(bias=0.0, fused=1.0, rerank=0.0)
    """The second stage with a reranker's probability (fitted with the ``onnx``
    cross-encoder: ``bench/fit_fusion.py --rerank-stage``); the default keeps the
    first-pass score."""
    similarity: SimilarityStage | None = None
    """The first pass again with a reranker's similarity (``Reranker.scores_are_similarities``:
    late interaction); ``None`` keeps the first-pass score."""

    def weights(self) -> dict[str, float]:
        """Weight by signal name."""
        return {name: getattr(self, name) for name in (*SIGNALS, "neighbour")}


@dataclass(frozen=True)
class SimilarityStage:
    """How a reranker of similarities (:attr:`Reranker.scores_are_similarities
    <memoweave.providers.reranker.Reranker.scores_are_similarities>`, a late-interaction
    model) re-scores the fused top ``late_interaction_top_n`` of a kind: each is fused again
    from its first-pass signals with ``first`` (its bias and weights; the neighbour pass runs
    again among them) plus ``rerank`` times the reranker's score (:mod:`.similarity`)."""

    first: Profile
    rerank: float


PROFILES: dict[str, Profile] = {
    # LoCoMo turns, fitted on conversations 26/30/41, checked on 42/43; the neighbour
    # weight chosen on 26/30/41 by recall@10 with the others fixed; the reranked stage
    # fitted on the same conversations; the similarity stage (session 15, onnx-colbert over
    # the fused top 50) chosen there by recall@10 (dense 0.5, similarity 5; the others
    # kept), the bias shifted so that the first result's mean score matches its relevance
    KIND_TURN: Profile(
        bias=-3.86,
        dense=2.48,
        keyword=4.17,
        entity=0.74,
        time=0.81,
        neighbour=3.0,
        reranked=RerankStage(bias=-3.82, fused=0.19, rerank=4.57),
        similarity=SimilarityStage(
            first=Profile(
                bias=-5.1, dense=0.5, keyword=4.17, entity=0.74, time=0.81, neighbour=3.0
            ),
            rerank=5.0,
        ),
    ),
    # LoCoMo observations of 26/30/41 + the fact-QA dev personas, checked on the rest; the
    # neighbour weight (facts observed at the same moment, session 8) chosen on 26/30/41 by
    # recall@10 with the others fixed (2 over 3); the reranked stage refitted (session 8) on
    # the reranker's scores of the rewritten first-person queries (.rerank_view): same
    # ranking as before, calibration only; the answer check's weight (session 11) chosen
    # on the fact-QA dev personas by the AUC of the first score, checked on the held-out;
    # the offset of a fact read about the user (session 16) chosen the same way (2.0 of
    # 0-2.5 in steps of 0.5);
    # the similarity stage (session 15, the onnx-colbert reranker's MaxSim over the fused top
    # 50) chosen on LoCoMo conversations 26/30/41 by recall@10 (dense 2.5, similarity 3; the
    # other weights kept), the bias shifted so that the first result's mean score matches
    # its observed relevance there
    KIND_FACT: Profile(
        bias=-4.59,
        dense=4.05,
        keyword=3.77,
        entity=0.0,
        time=0.89,
        neighbour=2.0,
        reranked=RerankStage(
            bias=-4.40, fused=0.447, rerank=5.37, answer_check=1.0, about_user=2.0
        ),
        similarity=SimilarityStage(
            first=Profile(bias=-5.0, dense=2.5, keyword=3.77, entity=0.0, time=0.89, neighbour=2.0),
            rerank=3.0,
        ),
    ),
}


def profile_of(payload: Mapping[str, Any]) -> Profile:
    """The profile of a stored memory (facts for unknown or missing kinds)."""
    return PROFILES.get(str(payload.get(MEMORY_KIND_KEY)), PROFILES[KIND_FACT])
