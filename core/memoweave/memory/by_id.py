"""Reading one memory by id for the operations that name it (``get``, ``update``,
``delete``): the optional scope they are given, the hint telling the store whose memory
it is, the read itself, and the turn an edit of it is ordered with."""

from __future__ import annotations

from typing import Any

from memoweave.errors import NotFound
from memoweave.filters import Comparison
from memoweave.memory.history import HistoryStore
from memoweave.memory.scope import Scope
from memoweave.providers.vector_store import StoredRecord, VectorStore
from memoweave.runtime.steps import Steps, call


def optional_scope(user_id: Any, agent_id: Any, run_id: Any) -> Scope | None:
    """The scope of the ids given (checked), or ``None`` when none is."""
    given = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    if all(v is None for v in given.values()):
        return None
    return Scope.of(**given, operation="this call")


def expect_owner(
    store: VectorStore, history: HistoryStore, memory_id: str, scope: Scope | None
) -> Steps[None]:
    """Tell ``store`` whose memory ``memory_id`` is before reading it by id (a store kept
    in parts by ``user_id`` then looks in one part first): the caller's ``user_id``, else
    the one the history's last event of it records (a hint: never changes a result)."""
    owner = scope.user_id if scope is not None else None
    if owner is None:
        events = yield call(history.events, memory_id)
        owner = events[-1].get("user_id") if events else None
    if isinstance(owner, str):
        store.expect_reads(Comparison("user_id", "eq", owner))


def fetch(
    store: VectorStore, memory_id: str, scope: Scope | None, *, with_vectors: bool = False
) -> Steps[StoredRecord]:
    """The stored record of ``memory_id``; ``NotFound`` if there is none (in ``scope``)."""
    found: list[StoredRecord] = yield call(store.get, [memory_id], with_vectors=with_vectors)
    if not found or (scope is not None and not scope.contains(found[0].payload)):
        raise NotFound(f"no memory with id {memory_id}" + (" in this scope" if scope else ""))
    return found[0]


def scope_key(record: StoredRecord) -> str:
    """The turn of a memory's own scope (what an edit of it is ordered with)."""
    payload = record.payload
    return Scope(payload.get("user_id"), payload.get("agent_id"), payload.get("run_id")).key()
