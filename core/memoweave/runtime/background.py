"""A value computed on another thread from the moment it is asked for."""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType
from typing import Generic, TypeVar

T = TypeVar("T")


class Background(Generic[T]):
    """``fn()`` running on another thread from construction; :meth:`result` waits for it,
    then returns its value or raises its exception (each time, with the traceback it was
    raised with: repeated raises do not grow it). Worth it for work that spends its time
    outside the GIL (a model load, a file read) while the caller goes on. The thread is a
    daemon unless ``daemon`` is false (then the interpreter's exit waits for ``fn``)."""

    def __init__(
        self, fn: Callable[[], T], *, name: str | None = None, daemon: bool = True
    ) -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        self._traceback: TracebackType | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), name=name, daemon=daemon)
        self._thread.start()

    def _run(self, fn: Callable[[], T]) -> None:
        try:
            self._value = fn()
        except BaseException as exc:  # re-raised by result() on the caller's thread
            self._error, self._traceback = exc, exc.__traceback__

    def done(self) -> bool:
        """Whether ``fn`` has returned or raised."""
        return not self._thread.is_alive()

    def result(self) -> T:
        """``fn()``'s value, once it returned; its exception if it raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error.with_traceback(self._traceback)
        return self._value  # type: ignore[return-value]  # set when there is no error
