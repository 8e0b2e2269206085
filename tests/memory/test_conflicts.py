"""Conflicting actions on one memory (issue 9 item 6): plausible LLM answers that name the
same existing memory twice. The rule (``memoweave.memory.write_plan``, docs/memory.md):
the first action on a memory owns it; later ones lose only their claim (their text is
stored as a plain new memory, a repeated delete is dropped). Checked for every ordered
pair of the four LLM action kinds on the pure planner, then through ``Memory.add``."""

from __future__ import annotations

import itertools
from datetime import datetime, timezone

import pytest

from memoweave.memory import Memory
from memoweave.memory.actions import (
    Action,
    AddMemory,
    SoftDeleteMemory,
    SupersedeMemory,
    UpdateMemory,
)
from memoweave.memory.scope import Scope
from memoweave.memory.write_plan import PreparedWrite, WriteContext, build_plan
from memoweave.providers.vector_store import STATUS_KEY, StoredRecord
from memoweave.testing.doubles import ScriptedLLM

from .conftest import MakeMemory

X = "memory-x"
SCOPE = Scope.of(user_id="alice", operation="test")
KINDS = {
    "add_replacing": lambda n: AddMemory(f"fact {n}", ("m1",), supersedes=(X, "other")),
    "update": lambda n: UpdateMemory(X, f"fact {n}", ("m1",)),
    "supersede": lambda n: SupersedeMemory(X, f"fact {n}", ("m1",)),
    "soft_delete": lambda n: SoftDeleteMemory(X),
}
PAIRS = list(itertools.product(KINDS, repeat=2))
#: The event the owner writes on X, by its kind.
OWNER_EVENT = {"add_replacing": "SUPERSEDE", "update": "UPDATE", "supersede": "SUPERSEDE",
               "soft_delete": "DELETE"}  # fmt: skip


def _record(memory_id: str) -> StoredRecord:
    payload = {"user_id": "alice", STATUS_KEY: "active", "memory": f"old {memory_id}"}
    return StoredRecord(memory_id, payload, [1.0, 0.0])


@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[f"{a}+{b}" for a, b in PAIRS])
def test_every_pair_on_one_memory_writes_it_once_and_keeps_every_text(
    first: str, second: str
) -> None:
    actions: list[Action] = [KINDS[first](1), KINDS[second](2)]
    texts = {
        i: (a.text, [0.0, 1.0 + i])
        for i, a in enumerate(actions)
        if not isinstance(a, SoftDeleteMemory)
    }
    ctx = WriteContext(scope=SCOPE, now=datetime(2024, 1, 1, tzinfo=timezone.utc))
    prepared = PreparedWrite(tuple(actions), ctx, texts)
    records = {X: _record(X), "other": _record("other")}
    plan, written = build_plan(prepared, records, {}, None, None)  # type: ignore[arg-type]

    on_x = [e.event for e in plan.events if e.memory_id == X]
    assert on_x == [OWNER_EVENT[first]]  # X is written once, by the first action
    assert [r.id for r in plan.upserts].count(X) == 1
    stored = [r.payload["memory"] for r in plan.upserts if r.id not in records]
    updated = [r.payload["memory"] for r in plan.upserts if r.id == X and first == "update"]
    assert sorted(stored + updated) == sorted(t for t, _ in texts.values())  # no text lost
    assert len({e.id for e in plan.events}) == len(plan.events)
    if second != "soft_delete":
        loser = next(r for r in plan.upserts if r.payload.get("memory") == "fact 2")
        assert X not in loser.payload.get("supersedes", [])
    assert {r["event"] for r in written.results} <= {"ADD", "UPDATE", "SUPERSEDE", "DELETE"}


def _seed(mem: Memory, llm: ScriptedLLM, *facts: str) -> dict[str, str]:
    llm.push({"facts": list(facts)})
    out = mem.add(" ".join(facts), user_id="alice")
    return {r["memory"]: r["id"] for r in out["results"]}


def _state(mem: Memory, memory_id: str) -> str:
    """active / superseded / deleted, checked to agree with the history's last event."""
    item = mem.get(memory_id)
    assert item is not None
    state = (
        "superseded" if item.get("superseded_by")
        else "deleted" if item.get("valid_until")
        else "active"
    )  # fmt: skip
    events = [e["event"] for e in mem.history(memory_id)]
    assert state == {"SUPERSEDE": "superseded", "DELETE": "deleted"}.get(events[-1], "active")
    visible = {i["id"] for i in mem.get_all(user_id="alice")["results"]}
    assert (memory_id in visible) == (state == "active")
    return state


def test_two_new_facts_replacing_the_same_memory(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM()
    mem = make_memory(llm=llm)
    llm.push({"memories": [{"text": "Alice lives in Lisbon", "replaces": [], "sources": [1]}]})
    old = mem.add("I live in Lisbon.", user_id="alice")["results"][0]["id"]
    llm.push(
        {
            "memories": [
                {"text": "Alice lives in Berlin", "replaces": [1], "sources": [1]},
                {"text": "Alice moved to Berlin in May", "replaces": [1], "sources": [1]},
            ]
        }
    )
    out = mem.add("I moved to Berlin in May.", user_id="alice")
    adds = [r for r in out["results"] if r["event"] == "ADD"]
    [supersede] = [r for r in out["results"] if r["event"] == "SUPERSEDE"]
    assert [a["memory"] for a in adds] == ["Alice lives in Berlin", "Alice moved to Berlin in May"]
    assert supersede["id"] == old and supersede["superseded_by"] == adds[0]["id"]
    assert _state(mem, old) == "superseded"
    assert [e["event"] for e in mem.history(old)] == ["ADD", "SUPERSEDE"]
    assert mem.get(adds[1]["id"]).get("supersedes") is None


DECIDE_PAIRS = list(itertools.product(["UPDATE", "DELETE"], repeat=2))


@pytest.mark.parametrize(
    ("first", "second"), DECIDE_PAIRS, ids=[f"{a}+{b}" for a, b in DECIDE_PAIRS]
)
def test_decide_events_on_the_same_memory(make_memory: MakeMemory, first: str, second: str) -> None:
    llm = ScriptedLLM()
    mem = make_memory({"extraction": {"strategy": "decide"}}, llm=llm)
    old = _seed(mem, llm, "Alice has a dog")["Alice has a dog"]
    events = [
        {"id": 1, "event": event, "text": f"Alice gave her dog away ({n})"}
        for n, event in enumerate((first, second), start=1)
    ]
    llm.push({"facts": ["Alice gave her dog away"]}, {"memory": events})
    out = mem.add("I gave my dog away.", user_id="alice")
    on_old = [r["event"] for r in out["results"] if r["id"] == old]
    assert on_old == ["SUPERSEDE" if first == "UPDATE" else "DELETE"]
    assert _state(mem, old) == ("superseded" if first == "UPDATE" else "deleted")
    texts = [e["text"] for e in events if e["event"] == "UPDATE"]
    active = sorted(i["memory"] for i in mem.get_all(user_id="alice")["results"])
    assert active == sorted(texts)  # every UPDATE's text is stored, once
