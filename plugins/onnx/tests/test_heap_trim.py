"""The idle trim of the C heap (memoweave_onnx.runtime.IdleHeapTrim): none while a call
runs or while calls asking for one keep coming, one ``delay`` seconds after the last such
call (calls asking for none do not put it off), also in a forked child.
The trims are real ``malloc_trim`` calls (nothing is replaced)."""

from __future__ import annotations

import os
import time

import pytest
from memoweave_onnx.runtime import IdleHeapTrim


def _wait_for(trim: IdleHeapTrim, count: int, timeout: float = 10.0) -> int:
    deadline = time.monotonic() + timeout
    while trim.trims < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return trim.trims


def test_no_trim_while_a_call_runs_one_after_it() -> None:
    trim = IdleHeapTrim(0.1)
    with trim.busy():
        trim.request()
        time.sleep(0.4)  # four delays inside the call
        assert trim.trims == 0
    assert _wait_for(trim, 1) == 1
    time.sleep(0.3)
    assert trim.trims == 1  # one per request, not one per delay


def test_calls_closer_than_the_delay_defer_the_trim() -> None:
    trim = IdleHeapTrim(0.5)
    start = time.monotonic()
    while time.monotonic() - start < 1.5:  # three delays of calls 50 ms apart
        with trim.busy():
            trim.request()
        time.sleep(0.05)
    assert trim.trims == 0
    assert _wait_for(trim, 1) == 1


def test_calls_that_ask_for_nothing_do_not_put_the_trim_off() -> None:
    """A burst of writes, then searches (one pass each, asking for no trim) 10 ms apart:
    the trim runs between two of them, ``delay`` after the last write, and only once."""
    trim = IdleHeapTrim(0.2)
    with trim.busy():
        trim.request()
    start = time.monotonic()
    while time.monotonic() - start < 1.0:
        with trim.busy():
            time.sleep(0.01)
        time.sleep(0.005)
    assert trim.trims == 1


def test_a_call_that_asks_for_nothing_starts_no_trim() -> None:
    trim = IdleHeapTrim(0.05)
    with trim.busy():
        pass
    time.sleep(0.3)
    assert trim.trims == 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_trims_on_its_own() -> None:
    trim = IdleHeapTrim(0.3)
    with trim.busy():
        trim.request()  # the parent's trim thread is waiting when the child forks
    pid = os.fork()
    if pid == 0:  # the child: its copy of the waiting thread does not run
        code = 1
        try:
            with trim.busy():
                trim.request()
            code = 0 if _wait_for(trim, 1, timeout=5) == 1 else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _wait_for(trim, 1) == 1
