"""Coalescing concurrent calls of a batch function into one call (group commit).

A batch function takes a list of items and returns one result per item, in order
(``Embedder.embed(texts, purpose=...)`` is one). Under ``AsyncMemory`` many writes and
searches embed one or two texts each at the same moment; :class:`Coalescer` turns them
into fewer, larger calls without adding latency when idle:

- a call made while no batch of its kind (same keyword arguments) is running starts one
  at once with its own items;
- calls made while a batch runs wait for it, then go together in the next batch (at most
  ``max_items`` items per batch);
- if a batch of several calls fails, each call is retried alone, so one call's bad input
  never fails another's; a lone call's failure is its own.

Runs on one event loop; the batch function is awaited (a native twin or an executor
wrapper, as the runner decides).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

BatchCall = Callable[..., Awaitable[list[Any]]]


@dataclass
class _Waiting:
    items: list[Any]
    future: asyncio.Future[list[Any]]


@dataclass
class _Lane:
    """The calls of one kind (same keyword arguments)."""

    waiting: list[_Waiting] = field(default_factory=list)
    running: bool = False
    task: asyncio.Future[None] | None = None


class Coalescer:
    """Merges concurrent calls of ``call(items, **kwargs)`` (see the module docstring)."""

    def __init__(self, call: BatchCall, *, max_items: int = 256) -> None:
        self._call = call
        self._max_items = max_items
        self._lanes: dict[Hashable, _Lane] = {}

    async def __call__(self, items: Sequence[Any], **kwargs: Any) -> list[Any]:
        """The results for ``items``, computed in a batch with other concurrent calls."""
        items = list(items)
        if not items:
            return await self._call(items, **kwargs)
        key = tuple(sorted(kwargs.items()))
        lane = self._lanes.setdefault(key, _Lane())
        waiting = _Waiting(items, asyncio.get_running_loop().create_future())
        lane.waiting.append(waiting)
        if not lane.running:
            lane.running = True
            lane.task = asyncio.ensure_future(self._drain(key, lane, kwargs))
        return await asyncio.shield(waiting.future)

    async def _drain(self, key: Hashable, lane: _Lane, kwargs: dict[str, Any]) -> None:
        try:
            while lane.waiting:
                batch, size = [lane.waiting.pop(0)], 0
                size = len(batch[0].items)
                while lane.waiting and size + len(lane.waiting[0].items) <= self._max_items:
                    batch.append(lane.waiting.pop(0))
                    size += len(batch[-1].items)
                await self._run(batch, kwargs)
        except BaseException as exc:  # never leave a caller waiting forever
            for waiting in lane.waiting:
                _settle(waiting, error=exc)
            lane.waiting.clear()
            raise
        finally:
            lane.running = False
            if not lane.waiting:
                self._lanes.pop(key, None)

    async def _run(self, batch: list[_Waiting], kwargs: dict[str, Any]) -> None:
        if len(batch) == 1:
            await self._alone(batch[0], kwargs)
            return
        try:
            results = await self._call([i for w in batch for i in w.items], **kwargs)
        except Exception:  # one call's bad input must not fail the others: each alone
            results = None
        if results is None or len(results) != sum(len(w.items) for w in batch):
            for waiting in batch:
                await self._alone(waiting, kwargs)
            return
        offset = 0
        for waiting in batch:
            _settle(waiting, result=results[offset : offset + len(waiting.items)])
            offset += len(waiting.items)

    async def _alone(self, waiting: _Waiting, kwargs: dict[str, Any]) -> None:
        try:
            _settle(waiting, result=await self._call(waiting.items, **kwargs))
        except Exception as exc:  # handed to its caller
            _settle(waiting, error=exc)


def _settle(
    waiting: _Waiting, *, result: list[Any] | None = None, error: BaseException | None = None
) -> None:
    if waiting.future.done():
        return
    if error is not None:
        waiting.future.set_exception(error)
    else:
        waiting.future.set_result(result if result is not None else [])


__all__ = ["Coalescer"]
