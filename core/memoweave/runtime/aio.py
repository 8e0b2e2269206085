"""The asynchronous driver of the core's pipelines (see :mod:`memoweave.runtime.steps`).

:class:`AsyncRunner` runs a pipeline on the running event loop:

- a ``Call`` of a provider method whose provider implements the async twin natively
  (``embed`` → ``aembed``, ``search`` → ``asearch``, see :func:`native_async`) awaits it;
- every other ``Call`` (sync-only providers, SQLite, CPU work) runs in ONE bounded thread
  pool owned by the runner, never one thread per call;
- the parts of a ``Gather`` run concurrently; the first failure cancels the others and is
  raised into the pipeline;
- a ``Shielded`` sub-pipeline runs as its own task: if the caller is cancelled it still
  finishes, and only then are the caller's ``finally`` blocks run;
- a ``Call`` of a coroutine function (a coordinator's wait) is awaited on the loop;
- concurrent calls of the batch methods named in ``coalesce`` (the embedder's ``embed``)
  are merged into fewer calls (:mod:`memoweave.runtime.batching`).

The twins are looked up once, when the runner is built ("wrapped once"): a provider that
implements only the sync contract works unchanged.

asyncio (and the executor, the coalescer) are imported by the code that runs on a loop:
importing this module, as every provider contract does, does not load them, so a
synchronous ``Memory`` process never pays for asyncio (~30 ms of a cold start).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from memoweave.runtime.steps import CLOCK, Call, Gather, NamedMethod, Part, Shielded, Steps

if TYPE_CHECKING:
    from memoweave.runtime.batching import Coalescer

T = TypeVar("T")

DEFAULT_ASYNC_MARK = "__memoweave_default_async__"
"""Attribute set on the contracts' default async methods (which only wrap the sync ones)."""


def default_async(method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """Mark a contract's default ``a<name>`` method (a thread wrapper of ``<name>``), so
    that :func:`native_async` tells it from a provider's own asynchronous I/O."""
    setattr(method, DEFAULT_ASYNC_MARK, True)
    return method


async def to_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``await asyncio.to_thread(fn, *args, **kwargs)`` (the contracts' default async
    twins), importing asyncio on first use."""
    import asyncio

    return await asyncio.to_thread(fn, *args, **kwargs)


def native_async(provider: object, name: str) -> Callable[..., Awaitable[Any]] | None:
    """The provider's own async twin of method ``name`` (``a<name>``), or ``None`` when it
    has none or only inherits the contract's default thread wrapper."""
    twin = getattr(type(provider), f"a{name}", None)
    if twin is None or getattr(twin, DEFAULT_ASYNC_MARK, False):
        return None
    import asyncio

    if not asyncio.iscoroutinefunction(twin):
        return None
    return getattr(provider, f"a{name}")  # type: ignore[no-any-return]  # a twin, by name


class _Driver:
    """Drives pipelines on the running loop; subclasses decide how one call runs."""

    async def _call(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def run(self, pipeline: Steps[T]) -> T:
        """Drive ``pipeline`` to its end on the running loop; return its value."""
        import asyncio

        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                step = pipeline.send(value) if error is None else pipeline.throw(error)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]  # a generator's return value is untyped
            finally:
                error = None
            try:
                if isinstance(step, Shielded):
                    inner = asyncio.ensure_future(self.run(step.pipeline))
                    try:
                        value = await asyncio.shield(inner)
                    except asyncio.CancelledError:
                        # the caller gave up; the shielded part finishes, then the rest of
                        # this pipeline (its ``finally`` blocks) is closed
                        inner.add_done_callback(lambda _: pipeline.close())
                        raise
                else:
                    value = await self.perform(step)
            except asyncio.CancelledError:
                if not isinstance(step, Shielded):
                    pipeline.close()
                raise
            except BaseException as exc:  # re-raised inside the pipeline
                value, error = None, exc

    async def perform(self, step: Part) -> Any:
        """The result of one step (or sub-pipeline)."""
        import asyncio

        if isinstance(step, Call):
            if asyncio.iscoroutinefunction(step.fn):  # a coordinator's wait
                return await step.fn(*step.args, **step.kwargs)
            return await self._call(step.fn, *step.args, **step.kwargs)
        if isinstance(step, Gather):
            return await self._gather(step)
        if isinstance(step, Shielded):
            return await self.run(step.pipeline)
        return await self.run(step)

    async def _gather(self, step: Gather) -> list[Any]:
        import asyncio

        if len(step.parts) == 1:
            return [await self.perform(step.parts[0])]
        tasks = [asyncio.ensure_future(self.perform(part)) for part in step.parts]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            pending = [t for t in tasks if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
        for task in tasks:  # the first failure in input order
            error = None if task.cancelled() else task.exception()
            if error is not None:
                raise error
        return [task.result() for task in tasks]


class AsyncRunner(_Driver):
    """Runs pipelines for one ``AsyncMemory``: native async I/O where the providers have it,
    one bounded executor for everything else."""

    def __init__(
        self,
        providers: Iterable[object],
        *,
        max_workers: int,
        coalesce: Iterable[Callable[..., list[Any]]] = (),
    ) -> None:
        """``coalesce``: bound batch methods (``embedder.embed``) whose concurrent calls are
        merged into fewer calls (:class:`memoweave.runtime.batching.Coalescer`)."""
        from concurrent.futures import ThreadPoolExecutor

        from memoweave.runtime.batching import Coalescer

        self._executor = ThreadPoolExecutor(max_workers, thread_name_prefix="memoweave")
        self._twins: dict[tuple[int, str], Callable[..., Awaitable[Any]]] = {}
        for provider in [p for p in providers if p is not None] + [CLOCK]:
            for name in dir(type(provider)):
                if name.startswith("a") and callable(getattr(type(provider), name[1:], None)):
                    twin = native_async(provider, name[1:])
                    if twin is not None:
                        self._twins[(id(provider), name[1:])] = twin
        self._coalesced: dict[tuple[int, str], Coalescer] = {}
        for fn in coalesce:
            self._coalesced[_key(fn)] = Coalescer(functools.partial(self._plain_call, fn))

    def twin_of(self, fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]] | None:
        """The native async twin of bound provider method ``fn``, if any."""
        return self._twins.get(_key(fn))

    async def _call(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        coalescer = self._coalesced.get(_key(fn))
        if coalescer is not None:
            return await coalescer(*args, **kwargs)
        return await self._plain_call(fn, *args, **kwargs)

    async def _plain_call(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        twin = self.twin_of(fn)
        if twin is not None:
            return await twin(*args, **kwargs)
        return await self.in_thread(fn, *args, **kwargs)

    async def in_thread(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in the runner's executor."""
        import asyncio

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    def close(self) -> None:
        """Stop the executor after the calls in flight. Idempotent."""
        self._executor.shutdown(wait=True)


class _Inline(_Driver):
    """For a provider's own pipelines: native twins awaited, any other call inline."""

    async def _call(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        owner = getattr(fn, "__self__", None)
        twin = native_async(owner, fn.__name__) if owner is not None else None
        if twin is not None:
            return await twin(*args, **kwargs)
        return fn(*args, **kwargs)


_INLINE = _Inline()


def awaitable(pipeline_method: Callable[..., Steps[T]]) -> Any:
    """The async twin running ``pipeline_method``'s pipeline with :func:`drive`: with
    :func:`memoweave.runtime.steps.blocking`, one pipeline gives a provider both its sync
    method and its native async twin."""

    async def method(self: Any, *args: Any, **kwargs: Any) -> T:
        return await drive(pipeline_method(self, *args, **kwargs))

    return NamedMethod(method, pipeline_method)


async def drive(pipeline: Steps[T]) -> T:
    """Run a provider's own pipeline on the running loop (its ``a<method>`` twins).

    A plugin writes its I/O logic once, as a pipeline whose steps call its transport
    (``call(transport.post, ...)``, :func:`pause` for back-off); ``run(pipeline)`` is its
    sync method and ``await drive(pipeline)`` its async twin: each call of a method whose
    owner has a native ``a<name>`` twin awaits the twin, any other call runs inline (CPU
    work, never blocking I/O)."""
    return await _INLINE.run(pipeline)


def _key(fn: Callable[..., Any]) -> tuple[int, str]:
    """Identifies a bound method by its object and name (bound methods are new objects on
    every attribute access)."""
    return id(getattr(fn, "__self__", None)), getattr(fn, "__name__", "")


__all__ = [
    "DEFAULT_ASYNC_MARK",
    "AsyncRunner",
    "awaitable",
    "default_async",
    "drive",
    "native_async",
    "to_thread",
]
