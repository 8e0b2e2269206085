"""A Hypothesis state machine over ``Memory`` checked against a model (issue 9): adds
(verbatim and through the scripted LLM, with supersession), updates, deletes, delete_all,
search, get, get_all and history, by users / agents / runs whose ids contain separators.

Properties: no read returns and no write touches a memory outside the caller's scope, and
no LLM prompt quotes another scope's text (message window, related memories); every read
agrees with the model; the history of every memory agrees with the model's events.

Profiles: ``ci`` (the default; >= 10,000 operations in all, asserted) and ``long``
(``MEMOWEAVE_HYPOTHESIS_PROFILE=long``: 50x more), which CI does not run.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from memoweave import NotFound
from memoweave.memory import Memory
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder, ScriptedLLM

PROFILES = {"ci": (110, 120), "long": (1000, 600)}  # (examples, steps per example)
PROFILE = os.environ.get("MEMOWEAVE_HYPOTHESIS_PROFILE", "ci")
EXAMPLES, STEPS = PROFILES[PROFILE]
MIN_OPERATIONS = 10_000 if PROFILE == "ci" else 500_000
MAX_RUNS = 3  # an example makes ~100 operations (10,116 in 100 examples, measured)

USERS = ["alice", "alice|agent_id=bot", "a=b", "a/b", "bob", "北京", "x y", '"q"', "null"]
AGENTS = [None, "bot", "bot|run_id=r1", "a=b"]
RUNS = [None, "r1", "r=1"]
WORDS = ["tea", "Berlin", "dogs", "jazz", "Paris", "cello", "bees", "sushi"]

Scope = tuple[str | None, str | None, str | None]
KEYS = ("user_id", "agent_id", "run_id")


def _kwargs(scope: Scope) -> dict[str, str]:
    return {k: v for k, v in zip(KEYS, scope, strict=True) if v is not None}


def _contains(caller: Scope, owner: Scope) -> bool:
    """Whether a memory of ``owner`` is visible to ``caller`` (every set key equal)."""
    return all(c is None or c == o for c, o in zip(caller, owner, strict=True))


scopes = st.tuples(st.sampled_from(USERS), st.sampled_from(AGENTS), st.sampled_from(RUNS)).filter(
    lambda s: any(v is not None for v in s)
)
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)


@dataclass
class Modelled:
    """What the model knows of one memory."""

    scope: Scope
    text: str
    status: str = "active"
    events: list[str] = field(default_factory=list)


class MemoryMachine(RuleBasedStateMachine):
    """Drives one ``Memory`` (in-memory store, SQLite history in memory) and a model."""

    operations = 0
    memories = Bundle("memories")

    def __init__(self) -> None:
        super().__init__()
        self.llm = ScriptedLLM()
        self.store = InMemoryVectorStore()
        self.mem = Memory(
            {"history_db_path": ":memory:"},
            embedder=HashingEmbedder(dims=32),
            vector_store=self.store,
            llm=self.llm,
        )
        self.model: dict[str, Modelled] = {}
        self.deleted: dict[str, Modelled] = {}
        self.said: dict[str, Scope] = {}
        self.counter = 0

    def teardown(self) -> None:
        self.mem.close()

    def _step(self) -> None:
        MemoryMachine.operations += 1

    def _unique(self, text: str, scope: Scope) -> str:
        """``text`` made unique with a ``#n#`` tag, remembered with the scope it belongs to."""
        self.counter += 1
        tag = f"#{self.counter}#"
        self.said[tag] = scope
        return f"{text} {tag}"

    def _check_prompt(self, caller: Scope) -> None:
        """The last LLM prompt quotes no text of a scope the caller may not see."""
        prompt = "\n".join(str(m.get("content")) for m in self.llm.calls[-1].messages)
        for tag, owner in self.said.items():
            if tag in prompt:
                assert _contains(caller, owner), (tag, owner, caller)

    @initialize()
    def start(self) -> None:
        self._step()
        assert self.mem.get_all(user_id="alice")["results"] == []  # opens the collection

    # -- writes ---------------------------------------------------------------------------

    @rule(target=memories, scope=scopes, text=texts)
    def add_verbatim(self, scope: Scope, text: str) -> Any:
        self._step()
        text = self._unique(text, scope)
        out = self.mem.add(text, infer=False, **_kwargs(scope))["results"]
        assert [r["event"] for r in out] == ["ADD"]
        memory_id = out[0]["id"]
        self.model[memory_id] = Modelled(scope, text, events=["ADD"])
        return memory_id

    @rule(target=memories, scope=scopes, text=texts, supersede=st.booleans())
    def add_inferred(self, scope: Scope, text: str, supersede: bool) -> Any:
        self._step()
        text = self._unique(text, scope)
        fact: dict[str, Any] = {"text": text}
        if supersede:
            fact["replaces"] = [1]  # the first related memory shown, if any
        self.llm.push({"memories": [fact]})
        out = self.mem.add(text, **_kwargs(scope))["results"]
        self._check_prompt(scope)
        new_id = None
        for result in out:
            if result["event"] == "ADD":
                new_id = result["id"]
                self.model[new_id] = Modelled(scope, result["memory"], events=["ADD"])
        for result in out:
            if result["event"] == "SUPERSEDE":
                old = self.model[result["id"]]  # a memory of the model ...
                assert _contains(scope, old.scope)  # ... that the caller may see
                assert old.status == "active" and result["superseded_by"] == new_id
                old.status = "superseded"
                old.events.append("SUPERSEDE")
        assert {r["event"] for r in out} <= {"ADD", "SUPERSEDE"} and new_id is not None
        return new_id

    @rule(memory_id=memories, scope=scopes, text=texts)
    def update(self, memory_id: str, scope: Scope, text: str) -> None:
        self._step()
        known = self.model.get(memory_id)
        if known is None or not _contains(scope, known.scope):
            with pytest.raises(NotFound):
                self.mem.update(memory_id, f"{text} #x#", **_kwargs(scope))
            return
        text = self._unique(text, known.scope)
        assert self.mem.update(memory_id, text, **_kwargs(scope))["memory"] == text
        known.text = text
        known.events.append("UPDATE")

    @rule(memory_id=memories, scope=scopes)
    def delete(self, memory_id: str, scope: Scope) -> None:
        self._step()
        known = self.model.get(memory_id)
        if known is None or not _contains(scope, known.scope):
            with pytest.raises(NotFound):
                self.mem.delete(memory_id, **_kwargs(scope))
            return
        self.mem.delete(memory_id, **_kwargs(scope))
        known.events.append("DELETE")
        self.deleted[memory_id] = self.model.pop(memory_id)

    @rule(scope=scopes)
    def delete_all(self, scope: Scope) -> None:
        self._step()
        self.mem.delete_all(**_kwargs(scope))
        for memory_id in [m for m, k in self.model.items() if _contains(scope, k.scope)]:
            self.model[memory_id].events.append("DELETE")
            self.deleted[memory_id] = self.model.pop(memory_id)

    # -- reads ----------------------------------------------------------------------------

    def _visible(self, scope: Scope) -> dict[str, str]:
        return {
            m: k.text
            for m, k in self.model.items()
            if k.status == "active" and _contains(scope, k.scope)
        }

    @rule(scope=scopes)
    def get_all(self, scope: Scope) -> None:
        self._step()
        page = self.mem.get_all(top_k=1000, **_kwargs(scope))
        assert {i["id"]: i["memory"] for i in page["results"]} == self._visible(scope)

    @rule(scope=scopes, query=texts)
    def search(self, scope: Scope, query: str) -> None:
        self._step()
        hits = self.mem.search(query, top_k=5, **_kwargs(scope))["results"]
        visible = self._visible(scope)
        assert all(h["id"] in visible and h["memory"] == visible[h["id"]] for h in hits)

    @rule(memory_id=memories, scope=scopes)
    def get_and_history(self, memory_id: str, scope: Scope) -> None:
        self._step()
        known = self.model.get(memory_id)
        gone = self.deleted.get(memory_id)
        item = self.mem.get(memory_id, **_kwargs(scope))
        events = [e["event"] for e in self.mem.history(memory_id, **_kwargs(scope))]
        if known is not None and _contains(scope, known.scope):
            assert item is not None and item["memory"] == known.text
            assert events == known.events
        elif gone is not None and _contains(scope, gone.scope):
            assert item is None and events == gone.events
        else:
            assert item is None and events == []

    @rule(scope=scopes)
    def unknown_ids_are_not_found(self, scope: Scope) -> None:
        self._step()
        stranger = str(uuid.uuid4())
        assert self.mem.get(stranger, **_kwargs(scope)) is None
        assert self.mem.history(stranger, **_kwargs(scope)) == []

    @invariant()
    def store_holds_exactly_the_model(self) -> None:
        assert self.store.count() == len(self.model)


def test_memory_matches_its_model_under_hostile_scopes() -> None:
    """Runs the machine until it has made ``MIN_OPERATIONS`` operations: Hypothesis picks
    each example's length at random (up to ``STEPS``), so one run of ``EXAMPLES`` examples
    falls just short of the budget now and then."""
    MemoryMachine.operations = 0
    for _ in range(MAX_RUNS):
        run_state_machine_as_test(
            MemoryMachine,
            settings=settings(
                max_examples=EXAMPLES,
                stateful_step_count=STEPS,
                deadline=None,
                database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            ),
        )
        if MemoryMachine.operations >= MIN_OPERATIONS:
            break
    assert MemoryMachine.operations >= MIN_OPERATIONS, MemoryMachine.operations
