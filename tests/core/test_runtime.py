"""The pipeline drivers and the write coordinators (memoweave.runtime)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from memoweave.providers.embedder import Embedder
from memoweave.runtime.aio import AsyncRunner, native_async
from memoweave.runtime.batching import Coalescer
from memoweave.runtime.ordering import LoopCoordinator, ThreadCoordinator
from memoweave.runtime.steps import Steps, call, gather, run, shielded
from memoweave.testing.doubles import HashingEmbedder


def pipeline(log: list[str]) -> Steps[str]:
    """Catches a failing step, then gathers a step and a sub-pipeline."""
    try:
        yield call(int, "not a number")
    except ValueError:
        log.append("caught")
    first, second = yield gather(call(str.upper, "a"), sub(log))
    return first + second


def sub(log: list[str]) -> Steps[str]:
    log.append("sub")
    value = yield call(str.lower, "B")
    return value


def test_sync_driver_runs_steps_and_raises_failures_inside_the_pipeline() -> None:
    log: list[str] = []
    assert run(pipeline(log)) == "Ab"
    assert log == ["caught", "sub"]


async def test_async_driver_gives_the_same_result() -> None:
    log: list[str] = []
    runner = AsyncRunner([], max_workers=2)
    try:
        assert await runner.run(pipeline(log)) == "Ab"
    finally:
        runner.close()
    assert log == ["caught", "sub"]


class NativeEmbedder(HashingEmbedder):
    async def aembed(self, texts: Any, *, purpose: str = "document") -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


def test_native_twins_are_told_from_the_contract_defaults() -> None:
    assert native_async(HashingEmbedder(), "embed") is None  # only the default thread wrapper
    assert native_async(NativeEmbedder(), "embed") is not None
    assert Embedder.aembed is HashingEmbedder.aembed


async def test_runner_awaits_native_twins_and_threads_the_rest() -> None:
    native, plain = NativeEmbedder(dims=2), HashingEmbedder(dims=2)
    runner = AsyncRunner([native, plain], max_workers=1)
    try:
        assert await runner.run(_embed(native)) == [[1.0, 0.0]]
        assert native.calls == 0  # the sync method never ran
        assert len((await runner.run(_embed(plain)))[0]) == 2 and plain.calls == 1
    finally:
        runner.close()


def _embed(embedder: Embedder) -> Steps[Any]:
    return (yield call(embedder.embed, ["x"], purpose="document"))


async def test_gather_runs_parts_together_and_cancels_the_rest_on_failure() -> None:
    both = asyncio.Barrier(2) if hasattr(asyncio, "Barrier") else None
    cancelled = asyncio.Event()

    async def meet() -> str:
        if both is not None:
            await asyncio.wait_for(both.wait(), 5)
        return "met"

    async def hang() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            cancelled.set()

    async def fail() -> None:
        raise KeyError("boom")

    def together() -> Steps[Any]:
        return (yield gather(call(meet), call(meet)))

    def failing() -> Steps[Any]:
        return (yield gather(call(hang), call(fail)))

    runner = AsyncRunner([], max_workers=1)
    try:
        assert await runner.run(together()) == ["met", "met"]
        with pytest.raises(KeyError):
            await runner.run(failing())
        assert cancelled.is_set()
    finally:
        runner.close()


async def test_a_shielded_part_finishes_when_the_caller_is_cancelled() -> None:
    events: list[str] = []
    started = asyncio.Event()

    async def slow() -> None:
        started.set()
        await asyncio.sleep(0.1)
        events.append("applied")

    def outer() -> Steps[None]:
        try:
            yield shielded(inner())
        finally:
            events.append("released")

    def inner() -> Steps[None]:
        yield call(slow)

    runner = AsyncRunner([], max_workers=1)
    try:
        task = asyncio.ensure_future(runner.run(outer()))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert events == []
        await asyncio.sleep(0.2)
        assert events == ["applied", "released"]  # the release waited for the apply
    finally:
        runner.close()


def test_thread_turns_follow_call_order_and_skip_released_ones() -> None:
    coordinator = ThreadCoordinator()
    first, second, third = (coordinator.take_turn("scope") for _ in range(3))
    other = coordinator.take_turn("other")
    coordinator.wait_turn(other)  # another scope never waits
    coordinator.wait_turn(first)
    order: list[str] = []
    waiter = threading.Thread(target=lambda: (coordinator.wait_turn(third), order.append("3")))
    waiter.start()
    coordinator.release_turn(second)  # a failed planner leaves its place
    order.append("1")
    coordinator.release_turn(first)
    waiter.join(5)
    assert order == ["1", "3"]


def test_thread_claims_are_exclusive_per_id_and_all_or_nothing() -> None:
    coordinator = ThreadCoordinator()
    coordinator.acquire(["a", "b"])
    got: list[str] = []
    waiter = threading.Thread(target=lambda: (coordinator.acquire(["b", "c"]), got.append("bc")))
    waiter.start()
    coordinator.acquire(["c2"])  # disjoint ids go through at once
    waiter.join(0.1)
    assert got == []
    coordinator.release(["a", "b"])
    waiter.join(5)
    assert got == ["bc"]
    exclusive = threading.Thread(target=coordinator.acquire_all)
    exclusive.start()
    exclusive.join(0.1)
    assert exclusive.is_alive()  # waits for the claims held
    coordinator.release(["b", "c", "c2"])
    exclusive.join(5)
    assert not exclusive.is_alive()
    coordinator.release_all()


async def test_loop_coordinator_waits_are_cancellation_safe() -> None:
    coordinator = LoopCoordinator()
    await coordinator.acquire(["x"])
    blocked = asyncio.ensure_future(coordinator.acquire(["x"]))
    await asyncio.sleep(0)
    blocked.cancel()
    with pytest.raises(asyncio.CancelledError):
        await blocked
    coordinator.release(["x"])
    await asyncio.wait_for(coordinator.acquire(["x"]), 5)  # the cancelled waiter held nothing
    turn_a, turn_b = coordinator.take_turn("s"), coordinator.take_turn("s")
    waiting = asyncio.ensure_future(coordinator.wait_turn(turn_b))
    await asyncio.sleep(0)
    assert not waiting.done()
    coordinator.release_turn(turn_a)
    await asyncio.wait_for(waiting, 5)


async def test_coalescer_merges_concurrent_calls_and_isolates_failures() -> None:
    batches: list[list[str]] = []

    async def upper(items: list[str], *, suffix: str = "") -> list[str]:
        batches.append(list(items))
        await asyncio.sleep(0.01)
        if "bad" in items:
            raise ValueError("bad item")
        return [i.upper() + suffix for i in items]

    merged = Coalescer(upper)
    results = await asyncio.gather(
        *(merged([f"t{i}"]) for i in range(5)), merged(["x"], suffix="!")
    )
    assert results == [["T0"], ["T1"], ["T2"], ["T3"], ["T4"], ["X!"]]
    assert len(batches) <= 4  # the first call alone, the others together, per kind
    batches.clear()
    first = asyncio.ensure_future(merged(["a"]))
    await asyncio.sleep(0)
    good, bad = merged(["b", "c"]), merged(["bad"])
    outcome = await asyncio.gather(first, good, bad, return_exceptions=True)
    assert outcome[0] == ["A"] and outcome[1] == ["B", "C"]
    assert isinstance(outcome[2], ValueError)  # only the bad call fails
