"""What only AsyncMemory shows: overlap on one event loop, native async twins awaited,
sync-only providers in one bounded executor, cancellation never leaving half a write."""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from memoweave import AsyncMemory, Memory, ValidationError
from memoweave.index.keyword_index import KeywordIndex
from memoweave.providers.llm import LLM
from memoweave.providers.vector_store import VectorRecord
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder, ScriptedLLM

WAIT = 10.0

PUBLIC = [
    "add",
    "update",
    "delete",
    "delete_all",
    "reset",
    "search",
    "get",
    "get_all",
    "history",
    "close",
    "from_config",
]


def test_async_memory_has_the_same_methods_and_arguments_as_memory() -> None:
    for name in PUBLIC:
        sync, amem = getattr(Memory, name), getattr(AsyncMemory, name)
        params = list(inspect.signature(sync).parameters.values())
        aparams = [
            p for p in inspect.signature(amem).parameters.values() if p.name != "max_workers"
        ]
        assert [(p.name, p.kind, p.default) for p in aparams] == [
            (p.name, p.kind, p.default) for p in params
        ], name
        if name != "from_config":
            assert inspect.iscoroutinefunction(amem), name
    public = {n for n in dir(Memory) if not n.startswith("_")}
    assert public <= {n for n in dir(AsyncMemory) if not n.startswith("_")}


class TracingStore(InMemoryVectorStore):
    """The in-memory store (sync only), recording the threads that run it and the texts
    it upserts; ``slow_upsert`` delays upserts (seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[str] = set()
        self.upserted: list[str] = []
        self.slow_upsert = 0.0

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.add(threading.current_thread().name)
        return super().search(*args, **kwargs)

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        self.threads.add(threading.current_thread().name)
        if self.slow_upsert:
            threading.Event().wait(self.slow_upsert)
        super().upsert(records)
        self.upserted.extend(r.payload.get("memory", "") for r in records)


@pytest.fixture
async def amemory(tmp_path: Path) -> AsyncIterator[Callable[..., AsyncMemory]]:
    built: list[AsyncMemory] = []

    def make(**overrides: Any) -> AsyncMemory:
        overrides.setdefault("embedder", HashingEmbedder(dims=64))
        overrides.setdefault("vector_store", TracingStore())
        config = {"history_db_path": str(tmp_path / f"h{len(built)}.db")}
        memory = AsyncMemory(config, max_workers=3, **overrides)
        built.append(memory)
        return memory

    yield make
    for memory in built:
        await memory.close()


def gate(answer: dict[str, Any], entered: asyncio.Event, release: asyncio.Event) -> Callable:
    async def respond(_messages: Any) -> dict[str, Any]:
        entered.set()
        await asyncio.wait_for(release.wait(), WAIT)
        return answer

    return respond


async def test_many_adds_to_many_scopes_overlap_their_llm_calls(amemory) -> None:
    in_flight = peak = 0

    async def answer(messages: list[dict[str, Any]]) -> dict[str, Any]:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.05)
        in_flight -= 1
        return {"memories": [{"text": messages[-1]["content"].rsplit("\n", 1)[-1]}]}

    mem = amemory(llm=ScriptedLLM(default=answer))
    calls = [mem.add(f"fact {i} of user {i % 10}", user_id=f"u{i % 10}") for i in range(40)]
    results = await asyncio.gather(*calls)
    assert all(len(r["results"]) == 1 for r in results)
    assert peak >= 10  # every scope had an LLM call in flight at once (serial would be 1)
    for user in range(10):
        stored = await mem.get_all(user_id=f"u{user}")
        assert len(stored["results"]) == 4


async def test_adds_to_one_scope_apply_in_call_order(amemory) -> None:
    entered, release = asyncio.Event(), asyncio.Event()
    llm = ScriptedLLM([gate({"memories": [{"text": "first fact"}]}, entered, release)])
    llm.push({"memories": [{"text": "second fact"}]})
    mem = amemory(llm=llm)
    first = asyncio.ensure_future(mem.add("one", user_id="alice"))
    await asyncio.wait_for(entered.wait(), WAIT)
    second = asyncio.ensure_future(mem.add("two", user_id="alice"))
    while llm.remaining:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    assert not second.done()  # planned, waiting for the first to apply
    release.set()
    await asyncio.gather(first, second)
    assert mem._providers.vector_store.upserted == ["first fact", "second fact"]


async def test_search_answers_while_an_add_waits_for_its_llm(amemory) -> None:
    entered, release = asyncio.Event(), asyncio.Event()
    llm = ScriptedLLM([gate({"memories": [{"text": "Alice lives in Rome"}]}, entered, release)])
    mem = amemory(llm=llm)
    await mem.add("I like tea.", user_id="alice", infer=False)
    pending = asyncio.ensure_future(mem.add("I live in Rome.", user_id="alice"))
    await asyncio.wait_for(entered.wait(), WAIT)
    hits = await asyncio.wait_for(mem.search("tea", user_id="alice"), WAIT)
    assert hits["results"][0]["memory"] == "I like tea." and not pending.done()
    release.set()
    assert (await pending)["results"][0]["memory"] == "Alice lives in Rome"


async def test_query_embedding_and_keyword_search_overlap(amemory, monkeypatch) -> None:
    keyword_started = threading.Event()
    original = KeywordIndex.scores

    def scores(self: KeywordIndex, *args: Any, **kwargs: Any) -> Any:
        keyword_started.set()
        return original(self, *args, **kwargs)

    class WaitingEmbedder(HashingEmbedder):
        async def aembed(self, texts: Sequence[str], *, purpose: str = "document") -> Any:
            if purpose == "query":  # only returns once the keyword search runs alongside
                for _ in range(int(WAIT / 0.01)):
                    if keyword_started.is_set():
                        break
                    await asyncio.sleep(0.01)
                assert keyword_started.is_set(), "the keyword search did not run meanwhile"
            return self.embed(texts, purpose=purpose)

    monkeypatch.setattr(KeywordIndex, "scores", scores)
    mem = amemory(embedder=WaitingEmbedder(dims=64))
    await mem.add("Quetzalcoatl is my iguana.", user_id="alice", infer=False)
    hits = await mem.search("quetzalcoatl", user_id="alice")
    assert hits["results"][0]["memory"] == "Quetzalcoatl is my iguana."


async def test_sync_only_providers_run_in_the_instance_executor(amemory) -> None:
    class SyncOnlyLLM(ScriptedLLM):
        agenerate = LLM.agenerate  # the contract's default: no native async

    llm = SyncOnlyLLM(default={"memories": [{"text": "a fact"}]})
    llm_threads: set[str] = set()
    original = llm.generate

    def generate(*args: Any, **kwargs: Any) -> Any:
        llm_threads.add(threading.current_thread().name)
        return original(*args, **kwargs)

    llm.generate = generate  # type: ignore[method-assign]
    mem = amemory(llm=llm)
    await asyncio.gather(*(mem.add(f"text {i}", user_id=f"u{i}") for i in range(12)))
    await asyncio.gather(*(mem.search("fact", user_id=f"u{i}") for i in range(12)))
    threads = mem._providers.vector_store.threads | llm_threads
    assert threads and all(t.startswith("memoweave") for t in threads)
    assert len(threads) <= 3  # max_workers: never one thread per call


async def test_cancelled_add_is_written_whole_or_not_at_all(amemory) -> None:
    store = TracingStore()
    entered, release = asyncio.Event(), asyncio.Event()
    llm = ScriptedLLM([gate({"memories": [{"text": "never written"}]}, entered, release)])
    llm.push({"memories": [{"text": "written whole"}]}, {"memories": [{"text": "after"}]})
    mem = amemory(llm=llm, vector_store=store)
    # cancelled during its LLM call: nothing written, and the scope's turn is released
    planning = asyncio.ensure_future(mem.add("one", user_id="alice"))
    await asyncio.wait_for(entered.wait(), WAIT)
    planning.cancel()
    with pytest.raises(asyncio.CancelledError):
        await planning
    # cancelled during its apply: the journaled write still finishes
    store.slow_upsert = 0.3
    applying = asyncio.ensure_future(mem.add("two", user_id="alice"))
    while not store.threads:
        await asyncio.sleep(0.01)
    applying.cancel()
    with pytest.raises(asyncio.CancelledError):
        await applying
    store.slow_upsert = 0.0
    out = await asyncio.wait_for(mem.add("three", user_id="alice"), WAIT)
    assert out["results"][0]["memory"] == "after"
    texts = [r["memory"] for r in (await mem.get_all(user_id="alice"))["results"]]
    assert sorted(texts) == ["after", "written whole"]
    for item in (await mem.get_all(user_id="alice"))["results"]:
        assert [e["event"] for e in await mem.history(item["id"])] == ["ADD"]


async def test_bad_arguments_raise_before_anything_runs(amemory) -> None:
    mem = amemory()
    with pytest.raises(ValidationError):
        await mem.add("text")  # no scope
    with pytest.raises(ValidationError):
        AsyncMemory(max_workers=0)
    assert mem._providers.vector_store.threads == set()
