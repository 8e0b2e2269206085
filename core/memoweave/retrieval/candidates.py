"""The candidate record the search pipeline passes between its stages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SignalHits = list[tuple[str, float, dict[str, Any]]]
"""A signal's ranked output: (memory id, raw score, payload), best first."""


@dataclass
class Signal:
    """What one signal said of one candidate.

    ``score`` is the signal's raw score, ``rank`` its 1-based rank among the signal's
    hits, ``contribution`` its share of the fused score (the shares add up to it).
    """

    score: float
    rank: int
    contribution: float = 0.0


@dataclass
class Candidate:
    """One memory and what each signal said of it."""

    id: str
    payload: dict[str, Any]
    signals: dict[str, Signal] = field(default_factory=dict)
    score: float = 0.0

    def explanation(self) -> dict[str, dict[str, float]]:
        """``explain`` of a search result: each signal's raw ``score``, ``rank`` and
        ``contribution`` (the reranker's score and rank only)."""
        return {
            name: (
                {"score": sig.score, "rank": sig.rank}
                if name == "rerank"
                else {"score": sig.score, "rank": sig.rank, "contribution": sig.contribution}
            )
            for name, sig in self.signals.items()
        }


def collect(candidates: dict[str, Candidate], name: str, hits: SignalHits) -> None:
    """Record ``hits`` of signal ``name``, creating candidates for memories not seen yet."""
    for rank, (memory_id, score, payload) in enumerate(hits, start=1):
        cand = candidates.setdefault(memory_id, Candidate(memory_id, payload))
        cand.signals[name] = Signal(float(score), rank)


def rank_scores(candidates: dict[str, Candidate], name: str, scores: dict[str, float]) -> None:
    """Record a re-scoring signal (entity, time, recency) over existing candidates; only
    positive scores count, ranked best first."""
    ordered = sorted((s, i) for i, s in scores.items() if s > 0 and i in candidates)
    ordered.sort(key=lambda pair: (-pair[0], pair[1]))
    for rank, (score, memory_id) in enumerate(ordered, start=1):
        candidates[memory_id].signals[name] = Signal(float(score), rank)
