"""A failure at any step of a write leaves store, history and keyword index in agreement,
and nothing acknowledged before it is lost."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import pytest

from memoweave import EmbeddingError, HistoryError, LLMError, MemoweaveError, VectorStoreError
from memoweave.memory import Memory
from memoweave.memory.history import HistoryStore
from memoweave.providers.vector_store import VectorRecord
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder, ScriptedLLM

from .conftest import MakeMemory


class FlakyStore(InMemoryVectorStore):
    """The real in-memory store, told to fail one named operation on demand."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_on: str | None = None
        self.fail_after_partial = False

    def _maybe_fail(self, op: str) -> None:
        if self.fail_on == op:
            self.fail_on = None
            raise VectorStoreError(f"injected {op} failure")

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        if self.fail_on == "upsert" and self.fail_after_partial and len(records) > 1:
            super().upsert(list(records)[:1])  # half the batch lands, then the engine dies
        self._maybe_fail("upsert")
        super().upsert(records)

    def delete(self, ids: Sequence[str]) -> None:
        self._maybe_fail("delete")
        super().delete(ids)


def snapshot(mem: Memory, memory_ids: list[str]) -> dict[str, Any]:
    everything = mem.get_all(user_id="alice", include_superseded=True, show_expired=True)
    return {
        "items": sorted(
            (i["id"], i["memory"], i.get("superseded_by")) for i in everything["results"]
        ),
        "history": {m: [e["event"] for e in mem.history(m)] for m in memory_ids},
        "keyword": sorted(
            h["id"]
            for h in mem.search("Berlin Paris", user_id="alice", include_superseded=True)["results"]
        ),
    }


@pytest.fixture
def setup(make_memory: MakeMemory) -> tuple[Memory, FlakyStore, ScriptedLLM, HashingEmbedder, str]:
    store, llm, embedder = FlakyStore(), ScriptedLLM(), HashingEmbedder()
    mem = make_memory(vector_store=store, llm=llm, embedder=embedder)
    llm.push({"memories": [{"text": "Alice lives in Berlin"}]})
    old = mem.add("I live in Berlin.", user_id="alice")["results"][0]["id"]
    return mem, store, llm, embedder, old


SUPERSEDING_ANSWER = {
    "memories": [{"text": "Alice lives in Paris", "replaces": [1]}, {"text": "Alice likes Paris"}]
}


@pytest.mark.parametrize(
    "step", ["llm", "embedder", "store", "store_partial", "history_begin", "history_commit"]
)
def test_failed_superseding_add_changes_nothing(setup, step: str, monkeypatch) -> None:
    mem, store, llm, embedder, old = setup
    before = snapshot(mem, [old])
    expected: type[MemoweaveError] = LLMError
    if step == "llm":
        llm.fail_next()
    else:
        llm.push(SUPERSEDING_ANSWER)
    if step == "embedder":
        embedder.fail_next()
        expected = EmbeddingError
    elif step in ("store", "store_partial"):
        store.fail_on = "upsert"
        store.fail_after_partial = step == "store_partial"
        expected = VectorStoreError
    elif step in ("history_begin", "history_commit"):
        method = "begin" if step == "history_begin" else "commit"
        original = getattr(HistoryStore, method)

        def broken(self, conn, op_id, *args, **kwargs):
            monkeypatch.setattr(HistoryStore, method, original)
            raise HistoryError(f"injected {method} failure")

        monkeypatch.setattr(HistoryStore, method, broken)
        expected = HistoryError
    with pytest.raises(expected):
        mem.add("I moved to Paris and I like it.", user_id="alice")
    assert snapshot(mem, [old]) == before
    # the same write succeeds afterwards, and nothing acknowledged was lost
    llm.push(SUPERSEDING_ANSWER)
    out = mem.add("I moved to Paris and I like it.", user_id="alice")
    assert sorted(r["event"] for r in out["results"]) == ["ADD", "ADD", "SUPERSEDE"]
    assert mem.get(old)["memory"] == "Alice lives in Berlin"
    assert [e["event"] for e in mem.history(old)] == ["ADD", "SUPERSEDE"]


@pytest.mark.parametrize("op", ["delete", "update"])
def test_failed_edit_changes_nothing(setup, op: str) -> None:
    mem, store, _llm, _embedder, old = setup
    before = snapshot(mem, [old])
    store.fail_on = "delete" if op == "delete" else "upsert"
    with pytest.raises(VectorStoreError):
        if op == "delete":
            mem.delete(old)
        else:
            mem.update(old, text="Alice lives in Paris")
    assert snapshot(mem, [old]) == before


def test_crash_between_steps_is_rolled_back_on_reopen(tmp_path) -> None:
    """A process that dies after journaling and writing the store, before the commit."""
    store, embedder = InMemoryVectorStore(), HashingEmbedder()
    config = {"history_db_path": str(tmp_path / "h.db")}
    mem = Memory(config, vector_store=store, embedder=embedder)
    kept = mem.add("I live in Berlin.", user_id="alice", infer=False)["results"][0]["id"]

    def crash(self, conn, op_id):
        raise SystemExit("process killed")

    original = HistoryStore.commit
    HistoryStore.commit = crash  # type: ignore[method-assign]
    try:
        with pytest.raises(SystemExit):
            mem.add("I moved to Paris.", user_id="alice", infer=False)
    finally:
        HistoryStore.commit = original  # type: ignore[method-assign]
    # SystemExit skipped the in-process rollback: the store holds an unacknowledged record
    assert store.count() == 2
    mem._providers.history.close()  # the "process" is gone; reopen on the same files
    reopened = Memory(config, vector_store=store, embedder=embedder)
    try:
        items = reopened.get_all(user_id="alice")["results"]
        assert [i["id"] for i in items] == [kept]
        assert store.count() == 1
    finally:
        reopened.close()


def test_opening_a_shared_home_never_rolls_back_a_live_write(tmp_path) -> None:
    """A second process opening the home while the first is between journaling and
    committing a write must leave that write alone (it is in flight, not crashed)."""
    store, embedder = InMemoryVectorStore(), HashingEmbedder()
    config = {"history_db_path": str(tmp_path / "h.db")}
    first = Memory(config, vector_store=store, embedder=embedder)
    first.get_all(user_id="alice")  # ready: its own recovery is done
    journaled, resume = threading.Event(), threading.Event()
    upsert = store.upsert

    def paused_upsert(records):  # step 2 of the write: journaled, no SQLite lock held
        store.upsert = upsert  # type: ignore[method-assign]
        journaled.set()
        assert resume.wait(10)
        upsert(records)

    store.upsert = paused_upsert  # type: ignore[method-assign]
    results: list[dict] = []
    writer = threading.Thread(
        target=lambda: results.append(first.add("I moved to Paris.", user_id="alice", infer=False))
    )
    writer.start()
    try:
        assert journaled.wait(10)
        second = Memory(config, vector_store=store, embedder=embedder)
        second.get_all(user_id="alice")  # its recovery runs now, mid-write of the first
    finally:
        resume.set()
        writer.join(10)
    memory_id = results[0]["results"][0]["id"]
    assert [i["id"] for i in second.get_all(user_id="alice")["results"]] == [memory_id]
    assert [e["event"] for e in second.history(memory_id)] == ["ADD"]
    second.close()
    first.close()
