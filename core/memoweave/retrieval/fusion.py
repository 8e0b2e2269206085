"""Fusion: one score per candidate from the signals' scores, with per-signal shares.

Two methods (``retrieval.fusion``), both giving a score in [0, 1]:

- ``weighted``: each signal's score is brought to [0, 1] (min-max over that signal's hits
  for the unbounded ``dense`` and ``keyword`` scores; the ``entity``, ``time`` and
  ``recency`` scores already are), multiplied by the signal's weight, summed and divided
  by the sum of the weights of the signals that fired for this query;
- ``rrf``: reciprocal-rank fusion, ``sum(weight / (rrf_k + rank))``, divided by its
  maximum ``sum(weight) / (rrf_k + 1)``.

A candidate a signal did not return gets nothing from it. Every signal's ``contribution``
is its share, so the contributions of a candidate add up to its score.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from memoweave.retrieval.candidates import Candidate

RELATIVE_SIGNALS = frozenset({"dense", "keyword"})
"""Signals whose raw scores are unbounded and get min-max normalised per query."""


def _normaliser(cands: Iterable[Candidate], name: str) -> tuple[float, float]:
    values = [c.signals[name].score for c in cands if name in c.signals]
    if not values or name not in RELATIVE_SIGNALS:
        return 0.0, 1.0
    low, high = min(values), max(values)
    return low, high - low


def fuse(
    candidates: Mapping[str, Candidate],
    weights: Mapping[str, float],
    *,
    method: str = "weighted",
    rrf_k: int = 60,
) -> None:
    """Set ``score`` and every signal's ``contribution`` on ``candidates`` in place."""
    fired = {
        name for cand in candidates.values() for name in cand.signals if weights.get(name, 0.0) > 0
    }
    total = sum(weights[name] for name in fired)
    if total <= 0:
        for cand in candidates.values():
            cand.score = 0.0
        return
    scale = {name: _normaliser(candidates.values(), name) for name in fired}
    for cand in candidates.values():
        cand.score = 0.0
        for name, signal in cand.signals.items():
            if name not in fired:
                signal.contribution = 0.0
                continue
            if method == "rrf":
                share = weights[name] * (rrf_k + 1) / (rrf_k + signal.rank) / total
            else:
                low, span = scale[name]
                value = (signal.score - low) / span if span > 0 else 1.0
                share = weights[name] * min(1.0, max(0.0, value)) / total
            signal.contribution = share
            cand.score += share
