"""Shared by ``add_cost.py`` and its mem0 peer: LoCoMo exchanges, the scripted extraction
and the statistics. Pure Python (no memoweave import): the mem0 peer runs it in its own venv.
"""

from __future__ import annotations

import json
import re
import statistics
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "bench" / "locomo" / "locomo-dev.json"
LATENCY_S = 0.2
TOKENS_METHOD = "characters / 4 (tiktoken is not installed, and its encodings need a download)"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Exchange:
    """One ``add`` call: a user turn and the reply, observed at the session's date."""

    messages: list[dict[str, str]]
    observed_at: datetime
    session: int


def parse_locomo_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> an aware UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def load_exchanges(path: Path, conversation: str | None) -> tuple[str, list[Exchange]]:
    """The exchanges of one conversation: consecutive turn pairs within each session; the
    first speaker of the conversation plays ``user``, the other ``assistant``."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    sample = next(
        (c for c in data if conversation in (None, c.get("sample_id"))),
        None,
    )
    if sample is None:
        raise SystemExit(f"conversation {conversation!r} not in {path}")
    conv = sample["conversation"]
    user_speaker = conv["speaker_a"]
    numbers = sorted(
        int(k.split("_")[1])
        for k in conv
        if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)
    )
    exchanges: list[Exchange] = []
    for n in numbers:
        observed = parse_locomo_date(conv[f"session_{n}_date_time"])
        turns = conv[f"session_{n}"]
        for i in range(0, len(turns), 2):
            messages = [
                {
                    "role": "user" if t["speaker"] == user_speaker else "assistant",
                    "name": t["speaker"],
                    "content": t["text"],
                }
                for t in turns[i : i + 2]
            ]
            exchanges.append(Exchange(messages, observed, n))
    return sample["sample_id"], exchanges


def plausible_facts(
    new: list[tuple[str, str]], existing: int
) -> list[tuple[str, list[int], list[int]]]:
    """What a model would extract: the first statement of each turn, attributed to its
    speaker, at most two; about one add in eight replaces existing memory 1.

    ``new`` is ``[(speaker, text)]``; returns ``[(fact, sources, replaces)]``.
    """
    facts: list[tuple[str, list[int], list[int]]] = []
    for number, (speaker, text) in enumerate(new, start=1):
        first = _SENTENCE_END.split(" ".join(text.split()))[0]
        if first.endswith("?") or len(first.split()) < 4:
            continue
        facts.append((f"{speaker} said: {first}", [number], []))
    facts = facts[:2]
    if facts and existing and zlib.crc32(facts[0][0].encode()) % 8 == 0:
        facts[0] = (facts[0][0], facts[0][1], [1])
    return facts


def prompt_chars(messages: list[dict[str, Any]]) -> int:
    """Characters of the text of a chat request."""
    total = 0
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):
            total += sum(len(p.get("text", "")) for p in content if isinstance(p, dict))
    return total


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def summarize(rows: list[dict[str, float]]) -> dict[str, float]:
    """Per-add means and wall/overhead percentiles (milliseconds)."""
    wall = [r["wall_ms"] for r in rows]
    over = [r["overhead_ms"] for r in rows]
    return {
        "adds": len(rows),
        "llm_calls_per_add": statistics.fmean(r["llm_calls"] for r in rows),
        "prompt_tokens_per_add": statistics.fmean(r["prompt_tokens"] for r in rows),
        "system_prompt_tokens": statistics.fmean(r["system_tokens"] for r in rows),
        **(
            {"completion_tokens_per_add": statistics.fmean(r["completion_tokens"] for r in rows)}
            if all("completion_tokens" in r for r in rows)
            else {}
        ),
        "embed_calls_per_add": statistics.fmean(r["embed_calls"] for r in rows),
        "embedded_texts_per_add": statistics.fmean(r["embedded_texts"] for r in rows),
        "wall_ms_p50": percentile(wall, 50),
        "wall_ms_p95": percentile(wall, 95),
        "overhead_ms_p50": percentile(over, 50),
        "overhead_ms_p95": percentile(over, 95),
        "cpu_ms_p50": percentile([r["cpu_ms"] for r in rows], 50),
        "cpu_ms_p95": percentile([r["cpu_ms"] for r in rows], 95),
    }
