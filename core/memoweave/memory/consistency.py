"""Store and history agreement, checked when a ``Memory`` opens (cheaply) and in full by
``memoweave doctor``.

The two sides count the same memories: the store's records whose status is ``active`` or
``superseded`` (soft-deleted records stay in the store with status ``deleted``), and the
history's memories with a committed ADD and no DELETE. On open, a :class:`ConsistencyError`
refuses the two shapes of silent loss, before anything is written:

- the history is new (its file was missing or empty, and no process has written through it
  since) but the store holds memories;
- the store holds no memories but the history records some (the store folder was deleted,
  moved, or pointed elsewhere).

The check is skipped for stores that do not persist, an in-memory history, and a history
shared by several collections (only the doctor can compare those). A ``reset`` marks
itself in the history first, so a reset that a crash interrupted is finished on the next
open instead of being mistaken for lost data.

:func:`check_on_open` and :func:`reset_all` are pipelines (:mod:`memoweave.runtime.steps`),
so that under ``AsyncMemory`` their store calls go through the store's async twins like
every other store call (qdrant-client local mode serves one client kind per folder).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memoweave.errors import ConsistencyError
from memoweave.filters import Comparison
from memoweave.memory.clock import iso, utcnow
from memoweave.memory.history import HistoryStore
from memoweave.memory.payload import STATUS_ACTIVE, STATUS_SUPERSEDED
from memoweave.providers.vector_store import STATUS_KEY, VectorStore
from memoweave.runtime.steps import Steps, call

if TYPE_CHECKING:
    from memoweave.memory.wiring import MemoryProviders

RESET_MARKER = "reset_pending"
_KEPT = Comparison(STATUS_KEY, "in", (STATUS_ACTIVE, STATUS_SUPERSEDED))


def stored_memory_count(store: VectorStore) -> int:
    """Records of the bound collection the history counts as live (not soft-deleted)."""
    return store.count(filter=_KEPT)


def check_on_open(store: VectorStore, history: HistoryStore, collection: str) -> Steps[None]:
    """Refuse to open when store and history show one side was lost (module docstring).

    Raises:
        ConsistencyError: with the counts, the locations and the repair in the hint.
    """
    if history.path == ":memory:":
        return
    shared = (yield call(history.bind_collection, collection)) - {collection}
    if shared or not store.capabilities.persistent:
        return
    # one record tells whether the store holds memories (an exact count costs ~36 ms at
    # 100k memories, ~0.4 s at 1M); the count is read only for a new history's message
    holds = yield call(store.has_records, filter=_KEPT)
    count = (yield call(store.count, filter=_KEPT)) if holds and history.created else 0
    # "new" is read after the store: another process that opened this history after us and
    # wrote meanwhile journaled every write here before it reached the store
    if history.created and holds and not (yield call(history.has_writes)):
        raise ConsistencyError(
            f"the history database {history.path} is new, but collection {collection!r} "
            f"holds {count} memories; nothing was changed",
            hint="Restore the history file from a backup, or run `memoweave doctor --repair` "
            "to rebuild its rows from the store.",
            details={"history": history.path, "collection": collection, "stored": count},
        )
    if not holds and (yield call(history.has_live_memories)):
        raise ConsistencyError(
            f"collection {collection!r} holds no memories, but the history database "
            f"{history.path} records some (was the store deleted or moved?); nothing was "
            "changed",
            hint="Restore the store from a backup, or run `memoweave doctor --repair` to "
            "re-embed the memories from the history (their metadata is not in the history).",
            details={"history": history.path, "collection": collection, "stored": 0},
        )


def reset_all(providers: MemoryProviders) -> Steps[None]:
    """Empty store, graph, history and side indexes; the history carries
    :data:`RESET_MARKER` until every step is done, so that a reset a crash interrupts is
    finished by the next open (each step is idempotent)."""
    p = providers
    yield call(p.history.set_meta, RESET_MARKER, iso(utcnow()))
    yield call(p.vector_store.drop_collection)
    if p.graph_store is not None:
        yield call(p.graph_store.drop_graph)
    yield call(p.history.reset)
    if p.indexes is not None:
        yield call(p.indexes.reset)
    yield call(p.history.set_meta, RESET_MARKER, None)


def reset_interrupted(history: HistoryStore) -> bool:
    """Whether a reset began and did not finish."""
    return history.meta(RESET_MARKER) is not None
