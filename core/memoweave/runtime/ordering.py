"""Who may apply a write when: per-scope turns, claims on memory ids, exclusive claims.

- **Turns** keep the writes of one scope in call order: a write takes a turn when it
  starts (before its LLM call) and applies only after every earlier write of the same
  scope has applied or failed. Writes to different scopes never wait for each other.
- **Claims** make the re-check-then-write of an apply atomic per memory: a write claims
  the ids it reads and rewrites (the memories it supersedes, updates or deletes), so a
  write of an overlapping scope (``user_id=alice`` and ``user_id=alice, agent_id=x``
  share memories) cannot change them in between. Claims are all-or-nothing, so they never
  deadlock.
- An **exclusive claim** (opening, ``reset``, ``close``) waits for every claim to be
  released and holds new ones back meanwhile.

Reads take nothing. :class:`ThreadCoordinator` serves ``Memory`` (blocking waits);
:class:`LoopCoordinator` serves ``AsyncMemory`` (awaitable waits, loop thread only). Both
share the bookkeeping of :class:`_Ledger`; pipelines call ``wait_turn`` / ``acquire``
through a ``call`` step and the non-blocking methods directly.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio


@dataclass(frozen=True)
class Turn:
    """One write's place in the queue of its scope."""

    key: str
    number: int


class _Ledger:
    """The state both coordinators share; callers hold the coordinator's lock."""

    def __init__(self) -> None:
        self._numbers = itertools.count()
        self._queues: dict[str, deque[int]] = {}
        self._busy: set[str] = set()
        self._exclusive = False
        self._exclusive_waiting = 0

    def _take(self, key: str) -> Turn:
        turn = Turn(key, next(self._numbers))
        self._queues.setdefault(key, deque()).append(turn.number)
        return turn

    def _is_next(self, turn: Turn) -> bool:
        queue = self._queues.get(turn.key)
        return queue is not None and len(queue) > 0 and queue[0] == turn.number

    def _drop(self, turn: Turn) -> None:
        queue = self._queues.get(turn.key)
        if queue is None:
            return
        try:
            queue.remove(turn.number)
        except ValueError:
            return
        if not queue:
            del self._queues[turn.key]

    def _can_claim(self, ids: Collection[str]) -> bool:
        return not self._exclusive and not self._exclusive_waiting and self._busy.isdisjoint(ids)

    def _can_claim_all(self) -> bool:
        return not self._exclusive and not self._busy


class ThreadCoordinator(_Ledger):
    """Turns and claims for threads (``Memory``)."""

    def __init__(self) -> None:
        super().__init__()
        self._cond = threading.Condition()

    def take_turn(self, key: str) -> Turn:
        """A place at the end of ``key``'s queue (never blocks)."""
        with self._cond:
            return self._take(key)

    def wait_turn(self, turn: Turn) -> None:
        """Block until every earlier turn of the scope is released."""
        with self._cond:
            self._cond.wait_for(lambda: self._is_next(turn))

    def release_turn(self, turn: Turn) -> None:
        """Leave the queue (idempotent)."""
        with self._cond:
            self._drop(turn)
            self._cond.notify_all()

    def acquire(self, ids: Collection[str]) -> None:
        """Block until no other write holds any of ``ids``, then hold them all."""
        with self._cond:
            self._cond.wait_for(lambda: self._can_claim(ids))
            self._busy.update(ids)

    def release(self, ids: Collection[str]) -> None:
        """Give back ``ids``."""
        with self._cond:
            self._busy.difference_update(ids)
            self._cond.notify_all()

    def acquire_all(self) -> None:
        """Block until no claim is held, then hold everything."""
        with self._cond:
            self._exclusive_waiting += 1
            try:
                self._cond.wait_for(self._can_claim_all)
            finally:
                self._exclusive_waiting -= 1
                self._cond.notify_all()
            self._exclusive = True

    def release_all(self) -> None:
        """Give back the exclusive claim."""
        with self._cond:
            self._exclusive = False
            self._cond.notify_all()


class LoopCoordinator(_Ledger):
    """Turns and claims for coroutines of one event loop (``AsyncMemory``).

    Every method runs on the loop's thread; the waits are cancellation-safe (a cancelled
    waiter holds nothing).
    """

    def __init__(self) -> None:
        super().__init__()
        self._waiters: list[asyncio.Future[None]] = []

    async def _wait_for(self, ready: Callable[[], bool]) -> None:
        import asyncio  # here: a synchronous process never loads asyncio

        while not ready():
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)

    def _notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def take_turn(self, key: str) -> Turn:
        """A place at the end of ``key``'s queue."""
        return self._take(key)

    async def wait_turn(self, turn: Turn) -> None:
        """Wait until every earlier turn of the scope is released."""
        await self._wait_for(lambda: self._is_next(turn))

    def release_turn(self, turn: Turn) -> None:
        """Leave the queue (idempotent)."""
        self._drop(turn)
        self._notify()

    async def acquire(self, ids: Collection[str]) -> None:
        """Wait until no other write holds any of ``ids``, then hold them all."""
        await self._wait_for(lambda: self._can_claim(ids))
        self._busy.update(ids)

    def release(self, ids: Collection[str]) -> None:
        """Give back ``ids``."""
        self._busy.difference_update(ids)
        self._notify()

    async def acquire_all(self) -> None:
        """Wait until no claim is held, then hold everything."""
        self._exclusive_waiting += 1
        try:
            await self._wait_for(self._can_claim_all)
        finally:
            self._exclusive_waiting -= 1
            if not self._exclusive_waiting:
                self._notify()
        self._exclusive = True

    def release_all(self) -> None:
        """Give back the exclusive claim."""
        self._exclusive = False
        self._notify()


Coordinator = ThreadCoordinator | LoopCoordinator

__all__ = ["Coordinator", "LoopCoordinator", "ThreadCoordinator", "Turn"]
