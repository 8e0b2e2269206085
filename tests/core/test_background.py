"""memoweave.runtime.background.Background: a value computed on another thread."""

from __future__ import annotations

import threading
import traceback

import pytest

from memoweave.errors import EmbeddingError
from memoweave.runtime.background import Background


def test_the_value_is_computed_on_another_thread_and_waited_for() -> None:
    release = threading.Event()
    caller = threading.get_ident()

    def compute() -> int:
        assert release.wait(10)
        return threading.get_ident()

    pending = Background(compute, name="memoweave-test")
    assert not pending.done()  # construction returned while compute() is held
    release.set()
    assert pending.result() != caller
    assert pending.done() and pending.result() == pending.result()


def test_its_error_is_raised_by_every_result_with_the_same_traceback() -> None:
    def fail() -> None:
        raise EmbeddingError("the model is gone", hint="reinstall it")

    pending = Background(fail)
    depths = []
    for _ in range(3):
        with pytest.raises(EmbeddingError, match="the model is gone") as info:
            pending.result()
        depths.append(len(traceback.extract_tb(info.value.__traceback__)))
    assert depths[0] == depths[1] == depths[2]


def test_a_thread_the_exit_waits_for_when_asked() -> None:
    """``daemon=False``: the interpreter's exit waits for ``fn`` (the onnx plugin's session
    build, which onnxruntime must not be stopped in)."""
    seen = {}
    for daemon in (True, False):
        pending = Background(lambda: threading.current_thread().daemon, daemon=daemon)
        seen[daemon] = pending.result()
    assert seen == {True: True, False: False}
