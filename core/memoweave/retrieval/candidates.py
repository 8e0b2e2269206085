"""The candidate record the search pipeline passes between its stages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SignalHits = list[tuple[str, float, dict[str, Any]]]
"""A signal's ranked output: (memory id, raw score, payload), best first."""


@dataclass
class Signal:
    """What one signal said of one candidate.

    ``score`` is the signal's raw score (cosine, BM25, ...), ``value`` the same evidence
    brought to [0, 1] by a fixed transform (never by the other candidates' scores),
    ``rank`` the 1-based rank of ``score`` among the candidates the signal scored and
    ``contribution`` its share of the fused score (the shares add up to it).
    """

    score: float
    value: float = 0.0
    rank: int = 0
    contribution: float = 0.0


@dataclass
class Candidate:
    """One memory and what each signal said of it."""

    id: str
    payload: dict[str, Any]
    signals: dict[str, Signal] = field(default_factory=dict)
    score: float = 0.0
    reranker_scored: bool = False
    """``score`` is a reranker's own, on its provider's scale (not fused with the signals)."""

    def explanation(self) -> dict[str, dict[str, float]]:
        """``explain`` of a search result: each signal's raw ``score``, bounded ``value``,
        ``rank`` and ``contribution`` (a reranker's score and rank only when ``score`` is
        the reranker's own)."""
        return {
            name: (
                {"score": sig.score, "rank": sig.rank}
                if name == "rerank" and self.reranker_scored
                else {
                    "score": sig.score,
                    "value": sig.value,
                    "rank": sig.rank,
                    "contribution": sig.contribution,
                }
            )
            for name, sig in self.signals.items()
        }


def collect(candidates: dict[str, Candidate], hits: SignalHits) -> None:
    """Create candidates for the memories of ``hits`` not seen yet."""
    for memory_id, _, payload in hits:
        candidates.setdefault(memory_id, Candidate(memory_id, payload))


def record(candidates: Mapping[str, Candidate], name: str, scores: Mapping[str, float]) -> None:
    """Record signal ``name``'s raw ``scores`` on the candidates it scored (others are
    ignored) and rank them among those candidates, best first."""
    ordered = sorted(
        ((s, i) for i, s in scores.items() if i in candidates), key=lambda p: (-p[0], p[1])
    )
    for rank, (score, memory_id) in enumerate(ordered, start=1):
        candidates[memory_id].signals[name] = Signal(float(score), rank=rank)
