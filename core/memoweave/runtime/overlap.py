"""Overlapping the parts of a ``Gather`` under the synchronous driver.

:func:`memoweave.runtime.steps.run` runs a ``Gather``'s parts one after the other. A
gather given an :class:`Overlap` (``gather(..., overlap=pool)``) instead runs its first
part in the calling thread while a later part runs in the pool's worker thread: worth it
for parts that spend their time in C code releasing the GIL (an ONNX run, an SQLite
query, a Rust vector search), such as a search's query embedding and keyword ranking.
The asynchronous driver ignores it (it runs every ``Gather`` concurrently already).

The pool is one long-lived thread (started by the first part it takes, never one per
call; plain ``threading``, so a one-shot process imports nothing more) and is never
waited for: a part finding the worker busy (another thread's search, or a gather nested
inside the worker's part) runs in the calling thread, as does every part in a process
forked after the worker started (the child has no worker). The results come back in
input order; a part's exception is raised as it was raised (the same typed error), the
first in input order, once every part that started has finished.

Measured at 100k memories in one scope (``Memory.search``, the query embedding and the
dense search beside the keyword ranking): with two idle cores p50 15.3 vs 19.3 ms, p95
21.9 vs 29.8, faster in 388 of 400 paired searches; on a saturated machine no change.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import Any


class _Job:
    """One part handed to the worker, and its outcome once ``done`` is set."""

    def __init__(self, perform: Callable[[Any], Any], part: Any) -> None:
        self.perform, self.part = perform, part
        self.value: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()


class Overlap:
    """One worker thread for the later parts of overlapped gathers; :meth:`close` stops
    it (idempotent; gathers then run their parts inline)."""

    def __init__(self, *, name: str = "memoweave-overlap") -> None:
        self._name = name
        self._cond = threading.Condition()
        self._job: _Job | None = None  # handed over, not yet taken by the worker
        self._busy = False  # a job handed over and not finished
        self._closed = False
        self._thread: threading.Thread | None = None
        self._pid = os.getpid()  # a forked child has no worker: its gathers run inline

    def perform(self, parts: Sequence[Any], perform: Callable[[Any], Any]) -> list[Any]:
        """``[perform(part) for part in parts]``, a later part in the worker thread."""
        started = [self._submit(perform, part) for part in parts[1:]]
        outcomes = [_outcome(perform, parts[0])]
        for part, job in zip(parts[1:], started, strict=True):
            if job is not None:
                job.done.wait()  # the part finishes, however the caller fared
                outcomes.append((job.value, job.error))
            elif all(error is None for _, error in outcomes):  # inline, as run() would
                outcomes.append(_outcome(perform, part))
        for _, error in outcomes:
            if error is not None:
                raise error
        return [value for value, _ in outcomes]

    def _submit(self, perform: Callable[[Any], Any], part: Any) -> _Job | None:
        """The part's job handed to the worker, or ``None`` (busy, closed, or in a
        process forked from the one the worker runs in)."""
        if self._pid != os.getpid():  # checked first: the lock may be a copy held at fork
            return None
        with self._cond:
            if self._closed or self._busy:
                return None
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
                self._thread.start()
            self._job, self._busy = _Job(perform, part), True
            self._cond.notify()
            return self._job

    def _serve(self) -> None:
        """The worker: run each job handed over; return once closed with none left."""
        while True:
            with self._cond:
                while self._job is None and not self._closed:
                    self._cond.wait()
                job, self._job = self._job, None
            if job is None:
                return
            try:
                job.value = job.perform(job.part)
            except BaseException as exc:  # raised in the caller by Overlap.perform
                job.error = exc
            with self._cond:
                self._busy = False
            job.done.set()

    def close(self) -> None:
        """Stop the worker after the part it is running."""
        if self._pid != os.getpid():  # a forked child: no worker of its own to stop
            self._closed = True
            return
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()


def _outcome(perform: Callable[[Any], Any], part: Any) -> tuple[Any, BaseException | None]:
    try:
        return perform(part), None
    except BaseException as exc:  # raised by Overlap.perform after the other parts
        return None, exc


__all__ = ["Overlap"]
