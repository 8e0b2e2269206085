"""One Memory shared by threads: no lock across the LLM call, writes ordered per scope,
targets re-checked when a write applies, nothing lost."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from memoweave import NotFound
from memoweave.memory import Memory
from memoweave.providers.vector_store import VectorRecord
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import ScriptedLLM

from .conftest import MakeMemory

WAIT = 10.0  # seconds: a generous bound for an event that must happen; never reached when green


@pytest.fixture
def api() -> str:
    """Threads drive the sync API (test_async_concurrency.py covers AsyncMemory)."""
    return "sync"


def gated(answer: dict[str, Any], entered: threading.Event, release: threading.Event) -> Callable:
    """A scripted answer that signals ``entered``, then blocks until ``release``."""

    def respond(_messages: list[dict[str, Any]]) -> dict[str, Any]:
        entered.set()
        assert release.wait(WAIT), "the test never released the LLM"
        return answer

    return respond


class RecordingStore(InMemoryVectorStore):
    """The in-memory store, remembering the texts of every upsert in order."""

    def __init__(self) -> None:
        super().__init__()
        self.upserted: list[str] = []

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        super().upsert(records)
        self.upserted.extend(r.payload.get("memory", "") for r in records)


def test_search_is_not_blocked_by_an_add_waiting_for_its_llm(
    llm_memory: Memory, llm: ScriptedLLM
) -> None:
    llm_memory.add("I like tea.", user_id="alice", infer=False)
    entered, release = threading.Event(), threading.Event()
    llm.push(gated({"memories": [{"text": "Alice lives in Rome"}]}, entered, release))
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(llm_memory.add, "I live in Rome.", user_id="alice")
        assert entered.wait(WAIT)
        # the add is inside its LLM call: reads and other scopes' writes go on meanwhile
        assert llm_memory.search("tea", user_id="alice")["results"][0]["memory"] == "I like tea."
        assert len(llm_memory.get_all(user_id="alice")["results"]) == 1
        llm_memory.add("I like coffee.", user_id="bob", infer=False)
        assert not pending.done()
        release.set()
        assert pending.result(WAIT)["results"][0]["memory"] == "Alice lives in Rome"


def test_adds_to_different_scopes_plan_in_parallel(llm_memory: Memory, llm: ScriptedLLM) -> None:
    both = threading.Barrier(2, timeout=WAIT)

    def answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
        both.wait()  # only passes when both LLM calls are in flight at once
        who = "Alice" if "alice" in messages[-1]["content"] else "Bob"
        return {"memories": [{"text": f"{who} likes jazz"}]}

    llm.push(answer, answer)
    with ThreadPoolExecutor(2) as pool:
        a = pool.submit(llm_memory.add, "alice: I like jazz.", user_id="alice")
        b = pool.submit(llm_memory.add, "bob: I like jazz.", user_id="bob")
        assert a.result(WAIT)["results"][0]["memory"] == "Alice likes jazz"
        assert b.result(WAIT)["results"][0]["memory"] == "Bob likes jazz"


def test_adds_to_one_scope_apply_in_call_order(make_memory: MakeMemory) -> None:
    store, llm = RecordingStore(), ScriptedLLM()
    mem = make_memory(vector_store=store, llm=llm)
    entered, release = threading.Event(), threading.Event()
    llm.push(gated({"memories": [{"text": "first fact"}]}, entered, release))
    llm.push({"memories": [{"text": "second fact"}]})
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(mem.add, "one", user_id="alice")
        assert entered.wait(WAIT)
        second = pool.submit(mem.add, "two", user_id="alice")
        # the second add planned (its LLM answered) but waits for the first to apply
        while llm.remaining:
            threading.Event().wait(0.01)
        assert not second.done()
        release.set()
        first.result(WAIT), second.result(WAIT)
    assert store.upserted == ["first fact", "second fact"]


def test_a_target_superseded_meanwhile_is_not_superseded_twice(
    llm_memory: Memory, llm: ScriptedLLM
) -> None:
    """Two overlapping scopes replace the same memory at once: the first to apply wins;
    the other's fact is still stored, as a new memory superseding nothing."""
    old = llm_memory.add("I live in Berlin.", user_id="alice", agent_id="support", infer=False)
    old_id = old["results"][0]["id"]
    entered, release = threading.Event(), threading.Event()
    llm.push(
        gated({"memories": [{"text": "Alice lives in Rome", "replaces": [1]}]}, entered, release)
    )
    llm.push({"memories": [{"text": "Alice lives in Paris", "replaces": [1]}]})
    with ThreadPoolExecutor(1) as pool:
        slow = pool.submit(llm_memory.add, "I moved to Rome.", user_id="alice")
        assert entered.wait(WAIT)
        fast = llm_memory.add("I moved to Paris.", user_id="alice", agent_id="support")
        release.set()
        late = slow.result(WAIT)
    paris = next(r["id"] for r in fast["results"] if r["event"] == "ADD")
    assert [r["event"] for r in late["results"]] == ["ADD"]
    assert llm_memory.get(old_id)["superseded_by"] == paris
    assert [e["event"] for e in llm_memory.history(old_id)] == ["ADD", "SUPERSEDE"]
    rome = llm_memory.get(late["results"][0]["id"])
    assert rome["memory"] == "Alice lives in Rome" and "supersedes" not in rome


def test_a_memory_deleted_meanwhile_is_not_resurrected(
    llm_memory: Memory, llm: ScriptedLLM
) -> None:
    kept = llm_memory.add("I live in Berlin.", user_id="alice", agent_id="support", infer=False)
    old_id = kept["results"][0]["id"]
    entered, release = threading.Event(), threading.Event()
    llm.push(
        gated({"memories": [{"text": "Alice lives in Rome", "replaces": [1]}]}, entered, release)
    )
    with ThreadPoolExecutor(1) as pool:
        slow = pool.submit(llm_memory.add, "I moved to Rome.", user_id="alice")
        assert entered.wait(WAIT)
        llm_memory.delete(old_id)
        release.set()
        late = slow.result(WAIT)
    assert [r["event"] for r in late["results"]] == ["ADD"]
    assert llm_memory.get(old_id) is None
    assert [e["event"] for e in llm_memory.history(old_id)] == ["ADD", "DELETE"]
    with pytest.raises(NotFound):
        llm_memory.update(old_id, text="back from the dead")


def test_threads_share_one_memory_without_errors_or_lost_writes(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM(default=lambda m: {"memories": [{"text": m[-1]["content"][-40:]}]})
    mem = make_memory(llm=llm)
    errors: list[BaseException] = []
    added: dict[str, list[str]] = {}

    def worker(n: int) -> None:
        user = f"user-{n % 3}"
        try:
            for i in range(12):
                out = mem.add(f"thread {n} fact number {i} is here", user_id=user, infer=i % 2 == 0)
                added.setdefault(user, []).extend(r["id"] for r in out["results"])
                mem.search(f"fact number {i}", user_id=user)
                mem.get_all(user_id=user, top_k=5)
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT * 6)
    assert errors == []
    for user, ids in added.items():
        stored = {r["id"] for r in mem.get_all(user_id=user, top_k=1000)["results"]}
        assert stored == set(ids)


def test_threads_share_the_embedded_default_stack(tmp_path: Path, monkeypatch) -> None:
    """The same with the real default providers (Qdrant Edge, ONNX, SQLite)."""
    monkeypatch.setenv("MEMOWEAVE_HOME", str(tmp_path))
    errors: list[BaseException] = []
    added: list[str] = []
    with Memory() as mem:

        def worker(n: int) -> None:
            try:
                for i in range(6):
                    out = mem.add(f"Thread {n} likes hobby number {i}.", user_id="alice")
                    added.extend(r["id"] for r in out["results"])
                    mem.search(f"hobby {i}", user_id="alice", top_k=3)
            except BaseException as exc:  # collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT * 6)
        assert errors == []
        stored = {r["id"] for r in mem.get_all(user_id="alice", top_k=1000)["results"]}
        assert stored == set(added) and len(added) == 24
