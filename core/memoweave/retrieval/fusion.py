"""Fusion: one score per candidate from its signals, with per-signal shares.

Every signal first gives each candidate a ``value`` in [0, 1] by a fixed transform of its
raw score, never by the other candidates' scores (:func:`signal_value`):

- ``dense``: the cosine similarity, clipped to [0, 1];
- ``keyword``: BM25 divided by the query's ceiling (the score of a memory matching every
  query token at saturation), so it says how much of the query's weight a memory
  matches; a store's native keyword score ``s`` becomes ``s / (s + 1)``;
- ``entity``, ``time``, ``recency``: already in [0, 1];
- ``rerank`` (a reranker whose scores are probabilities): its logit mapped linearly from
  [:data:`RERANK_LOGIT_FLOOR`, :data:`RERANK_LOGIT_CEILING`] to [0, 1], so that the
  model's confidence keeps its resolution near 0 and 1.

Two methods (``retrieval.fusion``):

- ``calibrated`` (default): ``score = sigmoid(bias + sum(weight * value))``. The weights
  and bias were fitted by logistic regression on labelled searches (``bench/``; see
  docs/retrieval.md), so a score estimates how likely the memory is to be what the query
  is about, the same whatever else is in the pool, the scope or the query;
- ``rrf``: reciprocal-rank fusion, ``sum(weight / (rrf_k + rank))`` divided by its maximum
  ``sum(weight) / (rrf_k + 1)``: rank-based, so not comparable across queries.

With ``search(rerank=True)`` and such a reranker, the fused top ``rerank_top_n`` are
fused again with the reranker's value (:func:`fuse_reranked`, weights per kind of memory
in :class:`.profiles.RerankStage`), so the score stays memoweave's calibrated one.

A signal's ``contribution`` is its share of the score (``score * w * value / sum(w *
value)`` for ``calibrated``; split evenly when no signal has a positive part), so the
contributions of a candidate add up to its score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from memoweave.retrieval.candidates import Candidate, Signal
from memoweave.retrieval.profiles import RerankStage

STORE_KEYWORD_HALF = 1.0
"""A store's native keyword score that maps to the value 0.5 (it has no known ceiling)."""
RERANK_LOGIT_FLOOR = -12.0
"""The reranker logit that maps to the value 0 (the ``onnx`` cross-encoder's lowest is
about -11.3)."""
RERANK_LOGIT_CEILING = 10.0
"""The reranker logit that maps to the value 1."""
ABOUT_USER = "about_user"
"""The signal of a memory the reranker read rewritten about the user (value 1; see
:attr:`.profiles.RerankStage.about_user`)."""


def signal_value(name: str, signal: Signal, keyword_ceiling: float | None) -> float:
    """The signal's raw score brought to [0, 1] (see the module docstring)."""
    score = signal.score
    if name == "rerank":
        p = min(1.0 - 1e-12, max(1e-12, score))
        logit = math.log(p / (1.0 - p))
        score = (logit - RERANK_LOGIT_FLOOR) / (RERANK_LOGIT_CEILING - RERANK_LOGIT_FLOOR)
    elif name == "keyword":
        if keyword_ceiling is None:
            score = score / (score + STORE_KEYWORD_HALF) if score > 0 else 0.0
        else:
            score = score / keyword_ceiling if keyword_ceiling > 0 else 0.0
    return min(1.0, max(0.0, score))


def sigmoid(z: float) -> float:
    """The logistic function, safe for large ``|z|``."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def fuse_calibrated(cand: Candidate, weights: Mapping[str, float], bias: float) -> None:
    """Set ``cand.score`` to ``sigmoid(bias + sum(weight * value))`` and the shares."""
    parts = {n: weights.get(n, 0.0) * s.value for n, s in cand.signals.items()}
    cand.score = sigmoid(bias + sum(parts.values()))
    positive = sum(p for p in parts.values() if p > 0)
    for name, part in parts.items():
        if positive > 0:
            share = cand.score * part / positive if part > 0 else 0.0
        else:  # nothing speaks for it: the base rate, split evenly
            share = cand.score / len(parts)
        cand.signals[name].contribution = share


def fuse_reranked(
    cand: Candidate, weights: Mapping[str, float], bias: float, stage: RerankStage
) -> None:
    """Fuse ``cand`` again with its ``rerank`` value: ``sigmoid(stage.bias + stage.fused *
    (bias + sum(weight * value)) + stage.rerank * rerank_value + stage.about_user *
    about_user_value)``, shares as above."""
    scaled = {name: stage.fused * weight for name, weight in weights.items()}
    scaled["rerank"] = stage.rerank
    scaled[ABOUT_USER] = stage.about_user
    fuse_calibrated(cand, scaled, stage.bias + stage.fused * bias)


def fuse_rrf(candidates: Mapping[str, Candidate], weights: Mapping[str, float], rrf_k: int) -> None:
    """Reciprocal-rank fusion over the signals that fired (see the module docstring)."""
    fired = {n for c in candidates.values() for n in c.signals if weights.get(n, 0.0) > 0}
    total = sum(weights[n] for n in fired)
    for cand in candidates.values():
        cand.score = 0.0
        for name, signal in cand.signals.items():
            share = 0.0
            if name in fired and signal.rank > 0:
                share = weights[name] * (rrf_k + 1) / (rrf_k + signal.rank) / total
            signal.contribution = share
            cand.score += share
