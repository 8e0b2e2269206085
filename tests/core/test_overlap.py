"""Overlapped gathers under the sync driver (memoweave.runtime.overlap)."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest

from memoweave.errors import HistoryError
from memoweave.runtime.overlap import Overlap
from memoweave.runtime.steps import Steps, call, gather, perform, run

WAIT = 10.0  # seconds: a bound for an event that must happen; never reached when green


@pytest.fixture
def pool() -> Iterator[Overlap]:
    overlap = Overlap(name="test-overlap")
    yield overlap
    overlap.close()


def thread_name() -> str:
    return threading.current_thread().name


def waits_for(event: threading.Event) -> str:
    assert event.wait(WAIT), "the other part never ran meanwhile"
    return thread_name()


def sets(event: threading.Event) -> str:
    event.set()
    return thread_name()


def fails(error: BaseException) -> None:
    raise error


def test_the_later_parts_run_in_the_worker_while_the_caller_runs_the_first(pool) -> None:
    started = threading.Event()

    def pipeline() -> Steps[list[str]]:
        first, second = yield gather(call(waits_for, started), call(sets, started), overlap=pool)
        return [first, second]

    # sequentially the first part would wait forever for the second
    first, second = run(pipeline())
    assert first == thread_name() and second.startswith("test-overlap")


def test_a_sub_pipeline_part_and_results_in_order(pool) -> None:
    def sub() -> Steps[str]:
        value = yield call(str.upper, "b")
        return value + thread_name()

    def pipeline() -> Steps[list[str]]:
        return (yield gather(call(str.upper, "a"), sub(), call(str.lower, "C"), overlap=pool))

    a, b, c = run(pipeline())  # one worker: the third part finds it busy or free, either way
    assert (a, c) == ("A", "c") and b.startswith("Btest-overlap")


def test_a_worker_failure_is_the_same_typed_error_at_the_yield(pool) -> None:
    error = HistoryError("history database error: disk I/O error")
    finished = threading.Event()

    def first() -> str:
        finished.wait(0.05)
        finished.set()
        return "first"

    def pipeline() -> Steps[str]:
        try:
            yield gather(call(first), call(fails, error), overlap=pool)
        except HistoryError as caught:
            assert caught is error and finished.is_set()
            return "caught"
        return "not raised"

    assert run(pipeline()) == "caught"


def test_the_first_failure_in_input_order_after_every_part_finished(pool) -> None:
    worker_done = threading.Event()

    def slow_failure() -> None:
        threading.Event().wait(0.05)
        worker_done.set()
        raise KeyError("second")

    with pytest.raises(ValueError, match="first") as raised:
        perform(gather(call(fails, ValueError("first")), call(slow_failure), overlap=pool))
    assert raised.type is ValueError and worker_done.is_set()


def test_a_part_left_inline_after_a_failure_is_not_run(pool) -> None:
    ran: list[str] = []
    blocker = threading.Event()

    def release_and_fail() -> None:
        blocker.set()
        raise ValueError("first")

    def hold() -> None:
        assert blocker.wait(WAIT)

    # the one worker takes the second part (until the first part has started), so the
    # third finds none free and would run inline: as run() would, it is not run
    with pytest.raises(ValueError, match="first"):
        perform(gather(call(release_and_fail), call(hold), call(ran.append, "third"), overlap=pool))
    assert ran == []


def test_a_gather_nested_in_a_worker_part_runs_inline_instead_of_waiting(pool) -> None:
    def inner() -> Steps[list[str]]:
        return (yield gather(call(thread_name), call(thread_name), overlap=pool))

    def pipeline() -> Steps[list[object]]:
        return (yield gather(call(str.upper, "a"), inner(), overlap=pool))

    a, names = run(pipeline())  # one worker, busy with `inner`: no deadlock
    assert a == "A" and len(set(names)) == 1 and names[0].startswith("test-overlap")


def test_close_stops_the_worker_and_later_gathers_run_inline() -> None:
    overlap = Overlap(name="closing-overlap")
    started = threading.Event()
    perform(gather(call(waits_for, started), call(sets, started), overlap=overlap))
    assert any(t.name.startswith("closing-overlap") for t in threading.enumerate())
    overlap.close()
    overlap.close()  # idempotent
    assert not any(t.name.startswith("closing-overlap") for t in threading.enumerate())
    names = perform(gather(call(thread_name), call(thread_name), overlap=overlap))
    assert names == [thread_name(), thread_name()]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_runs_its_gathers_inline_instead_of_hanging(pool) -> None:
    started = threading.Event()
    perform(gather(call(waits_for, started), call(sets, started), overlap=pool))  # a worker
    child = os.fork()
    if child == 0:  # the child: no worker thread; a hang is ended by the alarm
        signal.alarm(10)
        try:
            names = perform(gather(call(thread_name), call(thread_name), overlap=pool))
            os._exit(0 if names[0] == names[1] == thread_name() else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
