"""What both sides of ``concurrency.py`` share (pure Python: runs in mem0's venv too).

The scenarios, their texts and sizes, the statistics and the JSON hand-over. Each add is
one user message whose one plausible fact (``add_cost_data.plausible_facts``: the first
statement, attributed to the speaker) is what the scripted LLM answers, never replacing
anything, so "every memory present" means one stored memory per add.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from add_cost_data import plausible_facts

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results" / "concurrency.json"


@dataclass(frozen=True)
class Plan:
    """Sizes of the three scenarios (the issue's numbers; ``quick`` shortens the soak)."""

    burst_adds: int = 100
    burst_scopes: int = 10
    burst_latency_s: float = 0.2
    reader_memories: int = 200
    idle_searches: int = 40
    loaded_adds: int = 20
    loaded_latency_s: float = 2.0
    soak_threads: int = 8
    soak_seconds: float = 30.0
    soak_latency_s: float = 0.2
    soak_scopes: int = 4

    @classmethod
    def of(cls, quick: bool) -> Plan:
        return cls(soak_seconds=10.0) if quick else cls()

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def statement(n: int, scope: str) -> str:
    """A distinct declarative message (at least four words, so it yields one fact)."""
    return f"My note number {n} for {scope} says the parcel weighs {n * 7 + 3} grams."


def reader_text(n: int) -> str:
    topics = ("hiking", "ramen", "violin", "Lisbon", "chess", "tea", "cycling", "jazz")
    return f"Reader memory {n}: I often think about {topics[n % len(topics)]} on day {n}."


def facts_of(new: list[tuple[str, str]]) -> list[tuple[str, list[int]]]:
    """``[(fact, sources)]`` for the new messages, never replacing anything."""
    return [(text, sources) for text, sources, _ in plausible_facts(new, 0)]


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values`` by linear interpolation; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def latency_summary(seconds: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": percentile(ms, 0.5),
        "p95_ms": percentile(ms, 0.95),
        "max_ms": max(ms) if ms else 0.0,
        "mean_ms": statistics.fmean(ms) if ms else 0.0,
    }


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def write_json(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
