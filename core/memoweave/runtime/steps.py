"""Pipelines written once, run by a synchronous or an asynchronous driver.

The core's pipelines (add, search, the journaled write) are generators that *yield* every
I/O step instead of doing it, and receive its result back::

    def embed_query(embedder, query) -> Steps[list[float]]:
        vectors = yield call(embedder.embed, [query], purpose="query")
        return vectors[0]

A step is a :class:`Call` (one function call, usually a provider method), a
:class:`Gather` (several steps or sub-pipelines whose results are independent) or a
:class:`Shielded` sub-pipeline (finished even if the caller is cancelled). Failures
come back into the pipeline as the exception of the step, raised at its ``yield``, so
``try``/``except`` and ``with`` work as in plain code.

:func:`run` drives a pipeline in the calling thread (``Memory``): a ``Call`` is a direct
call, a ``Gather`` runs its parts one after the other (given an ``overlap`` pool, its
later parts in the pool's threads meanwhile: :mod:`memoweave.runtime.overlap`). The
asynchronous driver (:mod:`memoweave.runtime.aio`, ``AsyncMemory``) awaits a provider's
native ``a<name>`` method when it has one, runs everything else in one bounded executor,
and runs the parts of a ``Gather`` concurrently. So both APIs share every line of
pipeline logic.

Rule for pipeline code: a provider method is always called as its own step
(``yield call(store.count, filter=node)``), never from inside a helper that is itself
run as a step (``yield call(helper, store)``): the helper would run in a worker thread
under ``AsyncMemory`` and call the sync method, bypassing the provider's async twin.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, Union

if TYPE_CHECKING:
    from memoweave.runtime.overlap import Overlap

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """Call ``fn(*args, **kwargs)``; the pipeline receives its return value."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Gather:
    """Run independent ``parts`` (steps or pipelines); the pipeline receives their results
    as a list, in order. If any part fails, the first failure is raised. ``overlap``: the
    pool in which :func:`run` runs the later parts while the caller runs the first
    (:mod:`memoweave.runtime.overlap`); without it they run one after the other."""

    parts: tuple[Part, ...]
    overlap: Overlap | None = None


@dataclass(frozen=True)
class Shielded:
    """Run ``pipeline`` to its end even if the caller is cancelled meanwhile (the apply
    phase of a write: a journaled write is never abandoned halfway)."""

    pipeline: Generator[Any, Any, Any]


Step = Union[Call, Gather, Shielded]
Part = Union[Call, Gather, Shielded, Generator[Any, Any, Any]]
"""A step or a sub-pipeline: what a pipeline may yield (:func:`perform` runs either)."""
Steps = Generator[Part, Any, T]
"""A pipeline returning ``T``."""


def call(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Call:
    """The step calling ``fn(*args, **kwargs)``."""
    return Call(fn, args, kwargs)


def gather(*parts: Part, overlap: Overlap | None = None) -> Gather:
    """The step running ``parts`` independently (concurrently under ``AsyncMemory``, and
    under ``Memory`` given ``overlap``)."""
    return Gather(tuple(parts), overlap)


def shielded(pipeline: Steps[T]) -> Shielded:
    """The step running ``pipeline`` to its end whatever happens to the caller."""
    return Shielded(pipeline)


def run(pipeline: Steps[T]) -> T:
    """Drive ``pipeline`` to its end in the calling thread; return its value."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            step = pipeline.send(value) if error is None else pipeline.throw(error)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]  # a generator's return value is untyped
        finally:
            error = None  # drop the reference: no cycle through the traceback
        try:
            value = perform(step)
        except BaseException as exc:  # re-raised inside the pipeline
            value, error = None, exc


def perform(step: Part) -> Any:
    """The result of one step (or sub-pipeline) run synchronously."""
    if isinstance(step, Call):
        return step.fn(*step.args, **step.kwargs)
    if isinstance(step, Gather):
        if step.overlap is not None and len(step.parts) > 1:
            return step.overlap.perform(step.parts, perform)
        return [perform(part) for part in step.parts]
    if isinstance(step, Shielded):
        return run(step.pipeline)
    return run(step)


class Clock:
    """Waiting as a step: ``sleep`` blocks the thread (``Memory``), its twin ``asleep`` is
    awaited (``AsyncMemory``, :func:`memoweave.runtime.aio.drive`)."""

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    async def asleep(self, seconds: float) -> None:
        import asyncio  # here: a synchronous process never loads asyncio

        await asyncio.sleep(seconds)


CLOCK = Clock()


def pause(seconds: float) -> Call:
    """The step waiting ``seconds`` (a retry's back-off) without holding an event loop."""
    return call(CLOCK.sleep, seconds)


class NamedMethod:
    """A method made from a pipeline method, named after the attribute it is assigned to
    (the drivers find a method's async twin by that name: ``search`` → ``asearch``)."""

    def __init__(self, function: Callable[..., Any], source: Callable[..., Any]) -> None:
        functools.update_wrapper(function, source)
        self.function = function

    def __set_name__(self, owner: type, name: str) -> None:
        self.function.__name__ = name
        self.function.__qualname__ = f"{owner.__qualname__}.{name}"

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        return self.function if obj is None else self.function.__get__(obj, objtype)


def blocking(pipeline_method: Callable[..., Steps[T]]) -> Any:
    """The method running ``pipeline_method``'s pipeline to its end (:func:`run`): how a
    provider written as pipelines gets its sync methods."""

    def method(self: Any, *args: Any, **kwargs: Any) -> T:
        return run(pipeline_method(self, *args, **kwargs))

    return NamedMethod(method, pipeline_method)


def done(value: T) -> Steps[T]:
    """A pipeline with no step that returns ``value`` (for branches with nothing to do)."""
    return value
    yield  # pragma: no cover - makes this a generator


__all__ = [
    "CLOCK",
    "Call",
    "Clock",
    "Gather",
    "Part",
    "Shielded",
    "Step",
    "Steps",
    "blocking",
    "call",
    "done",
    "gather",
    "pause",
    "perform",
    "run",
    "shielded",
]
