"""``memoweave demo``'s run: ingest the sample conversation, show the memories, the fact
that changed and its history, and answer a few searches.

Without an LLM, ``add(infer=True)`` runs the offline extractor, which keeps the user's
statements but cannot tell that "I live in Berlin now" contradicts "I live in Lisbon". The
demo says so and applies the correction with an explicit ``Memory.update`` (history
ADD -> UPDATE). With an LLM the additive strategy decides it inside the same ``add``: the
old memory is kept, marked superseded (history ADD -> SUPERSEDE).

A weak model may give an answer that is still unusable after the repair: that add raises
``LLMError`` and writes nothing (the API's promise). The demo reports it and goes on with
the next add; the wall time of every add is measured and summarised.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.rule import Rule

from memoweave.cli.render import history_table, memories_table, search_table
from memoweave.demo.sample import SampleConversation
from memoweave.errors import LLMError
from memoweave.memory.api import Memory

SEARCH_TOP_K = 3


@dataclass
class DemoReport:
    """What the demo did, for ``--json`` and for tests."""

    mode: str
    turns: int
    adds: int
    events: dict[str, int] = field(default_factory=dict)
    memories: list[dict[str, Any]] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)
    searches: list[dict[str, Any]] = field(default_factory=list)
    ingest_seconds: float = 0.0
    add_seconds: list[float] = field(default_factory=list)
    failed_adds: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def run_demo(
    memory: Memory, sample: SampleConversation, console: Console, *, with_llm: bool
) -> DemoReport:
    """Run the whole demo on ``memory`` (its ``sample.user_id`` memories are replaced)."""
    scope: dict[str, Any] = {"user_id": sample.user_id}
    mode = "llm" if with_llm else "offline"
    report = DemoReport(mode=mode, turns=sample.turn_count, adds=0)
    memory.delete_all(**scope)
    console.print(Rule(f"memoweave demo: {sample.title}"))
    console.print(
        "Mode: "
        + (
            "LLM extraction (additive strategy: one LLM call per add)"
            if with_llm
            else "offline extractor (no LLM configured: the user's statements are kept as "
            "they are; pass --config with an llm section for model-made memories)"
        ),
        markup=False,
    )
    _ingest(memory, sample, console, report)
    report.memories = sorted(
        memory.get_all(top_k=200, **scope)["results"],
        key=lambda m: (m.get("observed_at") or "", m.get("created_at") or ""),
    )
    console.print(memories_table(report.memories, title=f"Memories of {sample.user_id}"))
    console.print(Rule(f"The fact that changed: {sample.changed_fact.topic}"))
    if with_llm:
        report.changed = _llm_changes(memory, sample, console)
    else:
        report.changed = _offline_change(memory, sample, console)
    console.print(Rule("Searches"))
    for query in sample.queries:
        hits = memory.search(query, top_k=SEARCH_TOP_K, **scope)["results"]
        report.searches.append({"query": query, "results": hits})
        console.print(search_table(hits, title=f"Search: {query}", explain=False))
    return report


def _ingest(
    memory: Memory, sample: SampleConversation, console: Console, report: DemoReport
) -> None:
    start = time.perf_counter()
    for number, session in enumerate(sample.sessions, start=1):
        counts: dict[str, int] = {}
        calls = sample.exchanges(session)
        for call_number, messages in enumerate(calls, start=1):
            began = time.perf_counter()
            try:
                result = memory.add(
                    messages, user_id=sample.user_id, observed_at=session.observed_at
                )
            except LLMError as exc:  # nothing was written; the next add goes on
                result = {"results": []}
                counts["FAILED"] = counts.get("FAILED", 0) + 1
                report.failed_adds.append(
                    {"session": number, "add": call_number, "error": exc.to_dict()}
                )
                console.print(
                    f"  add {call_number} of session {number} failed, nothing was written: "
                    f"{exc.message}",
                    markup=False,
                )
            report.add_seconds.append(time.perf_counter() - began)
            report.adds += 1
            for change in result["results"]:
                counts[change["event"]] = counts.get(change["event"], 0) + 1
        for event, n in counts.items():
            report.events[event] = report.events.get(event, 0) + n
        summary = ", ".join(f"{n} {event}" for event, n in sorted(counts.items())) or "nothing"
        console.print(
            f"Session {number} ({session.observed_at[:10]}): {len(session.turns)} turns, "
            f"{len(calls)} add() calls -> {summary}",
            markup=False,
        )
    report.ingest_seconds = time.perf_counter() - start
    if report.add_seconds:
        times = sorted(report.add_seconds)
        console.print(
            f"Wall time per add(): mean {sum(times) / len(times):.2f} s, median "
            f"{times[len(times) // 2]:.2f} s, max {times[-1]:.2f} s"
            + (f"; {len(report.failed_adds)} add(s) failed" if report.failed_adds else ""),
            markup=False,
        )


def _offline_change(
    memory: Memory, sample: SampleConversation, console: Console
) -> list[dict[str, Any]]:
    fact = sample.changed_fact
    old = next(
        (m for m in memory.get_all(top_k=200, user_id=sample.user_id)["results"]
         if fact.match.lower() in m["memory"].lower()),
        None,
    )  # fmt: skip
    if old is None:
        console.print(f"No memory mentions {fact.match!r}; nothing to correct.", markup=False)
        return []
    console.print(
        f"The offline extractor stored both {old['memory']!r} and the news of the move to "
        f"{fact.after}: it cannot tell that one replaces the other. An application (or the "
        "user) corrects it with Memory.update(), which keeps the history:",
        markup=False,
    )
    memory.update(old["id"], text=fact.correction, user_id=sample.user_id)
    events = memory.history(old["id"])
    console.print(history_table(events, title=f"History of {old['id']}"))
    console.print(
        "With an LLM configured (memoweave demo --config FILE), the additive strategy decides "
        "this inside the same add() call: the Lisbon memory is kept but marked superseded "
        "by the new one (history ADD -> SUPERSEDE), and searches no longer return it.",
        markup=False,
    )
    return [{"id": old["id"], "history": events}]


def _llm_changes(
    memory: Memory, sample: SampleConversation, console: Console
) -> list[dict[str, Any]]:
    listed = memory.get_all(top_k=500, include_superseded=True, user_id=sample.user_id)
    superseded = [m for m in listed["results"] if m.get("superseded_by")]
    if not superseded:
        console.print(
            f"The model did not mark any memory as superseded; the memories above show what "
            f"it kept about {sample.changed_fact.topic}.",
            markup=False,
        )
        return []
    about = sample.changed_fact.before.lower()
    superseded.sort(key=lambda m: about not in m["memory"].lower())
    changed = []
    for old in superseded[:3]:
        new = memory.get(old["superseded_by"])
        console.print(
            f"{old['memory']!r} was superseded by {new['memory'] if new else '?'!r}",
            markup=False,
        )
        events = memory.history(old["id"])
        console.print(history_table(events, title=f"History of {old['id']}"))
        changed.append({"id": old["id"], "superseded_by": old["superseded_by"], "history": events})
    return changed
