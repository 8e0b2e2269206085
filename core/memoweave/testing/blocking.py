"""Driving async objects from synchronous tests, so one suite checks both APIs.

:class:`Blocking` wraps an object whose methods are coroutines (an ``AsyncMemory``, or a
provider's ``a<name>`` twins with ``prefix="a"``) and exposes them as plain blocking
calls, each run to completion on ONE private event loop (async clients stay bound to the
loop that first used them). Anything that is not a coroutine method passes through.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any


class Blocking:
    """``Blocking(target, prefix="a").search(...)`` runs ``await target.asearch(...)``.

    Not thread-safe: one test thread drives it. :meth:`close_loop` closes the loop.
    """

    def __init__(self, target: Any, *, prefix: str = "") -> None:
        self._target = target
        self._prefix = prefix
        self._loop = asyncio.new_event_loop()

    @property
    def target(self) -> Any:
        """The wrapped object."""
        return self._target

    def run(self, awaitable: Any) -> Any:
        """Run ``awaitable`` to completion on the proxy's loop."""
        return self._loop.run_until_complete(awaitable)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._target, self._prefix + name, None)
        if method is not None and asyncio.iscoroutinefunction(method):
            return self._blocking(method)
        return getattr(self._target, name)

    def _blocking(self, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            return self.run(method(*args, **kwargs))

        return call

    def close_loop(self) -> None:
        """Cancel what is left on the loop and close it. Idempotent."""
        if self._loop.is_closed():
            return
        pending = asyncio.all_tasks(self._loop)
        for task in pending:
            task.cancel()
        if pending:
            self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()


__all__ = ["Blocking"]
