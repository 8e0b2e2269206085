"""Journaled writes that keep the vector store and the SQLite history in agreement.

A :class:`WritePlan` lists every record to upsert, every id to hard-delete, the
before-image of every touched id, the history events and the messages. :func:`apply_plan`
(a pipeline, see :mod:`memoweave.runtime.steps`) runs it in three steps:

1. one SQLite transaction journals the before-images and writes events and messages as
   *pending* (invisible to readers);
2. the vector store applies the deletes and the upserts;
3. one SQLite transaction runs the ``on_commit`` hooks (e.g. the keyword index) and makes
   the pending rows visible.

If step 2 or 3 fails, the store is restored from the before-images and the pending rows
are discarded, so the write either happened completely or not at all. If the process dies
between the steps, :func:`recover` (run when a ``Memory`` opens) finishes the rollback.
"""

from __future__ import annotations

import logging
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memoweave.errors import HistoryError, MemoweaveError, VectorStoreError
from memoweave.memory.history import HistoryEvent, HistoryStore, StoredMessage
from memoweave.providers.vector_store import StoredRecord, VectorRecord, VectorStore
from memoweave.runtime.steps import Steps, call

log = logging.getLogger(__name__)

CommitHook = Callable[[sqlite3.Connection], None]


@dataclass
class WritePlan:
    """Everything one write changes."""

    upserts: list[VectorRecord] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    before: dict[str, StoredRecord | None] = field(default_factory=dict)
    events: list[HistoryEvent] = field(default_factory=list)
    messages: list[StoredMessage] = field(default_factory=list)
    on_commit: list[CommitHook] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.upserts or self.deletes or self.events or self.messages or self.on_commit)


def apply_plan(plan: WritePlan, store: VectorStore, history: HistoryStore, now: str) -> Steps[None]:
    """The pipeline applying ``plan`` atomically across store and history (module doc)."""
    if plan.empty:
        return
    touched = {r.id for r in plan.upserts} | set(plan.deletes)
    missing = touched - plan.before.keys()
    if missing:
        raise ValueError(f"write plan lacks before-images for {sorted(missing)}")
    op_id = str(uuid.uuid4())
    undo = [_undo_entry(i, rec) for i, rec in plan.before.items()]
    yield call(_journal, history, op_id, now, undo, plan)
    try:
        if plan.deletes:
            yield call(store.delete, plan.deletes)
        if plan.upserts:
            yield call(store.upsert, plan.upserts)
    except Exception as exc:
        yield from _roll_back(op_id, undo, store, history)
        if isinstance(exc, MemoweaveError):
            raise
        raise VectorStoreError(f"vector store write failed: {exc}") from exc
    try:
        yield call(_commit, history, op_id, plan.on_commit)
    except Exception as exc:
        yield from _roll_back(op_id, undo, store, history)
        if isinstance(exc, MemoweaveError):
            raise
        raise HistoryError(f"history commit failed: {exc}") from exc


def recover(store: VectorStore, history: HistoryStore) -> Steps[int]:
    """Roll back writes a crash left half-done; returns how many were rolled back."""
    pending = yield call(history.pending_journal)
    for op_id, undo in pending:
        yield from _roll_back(op_id, undo, store, history)
    return len(pending)


def _journal(
    history: HistoryStore, op_id: str, now: str, undo: list[dict[str, Any]], plan: WritePlan
) -> None:
    with history.transaction() as conn:
        history.begin(conn, op_id, now, undo, plan.events, plan.messages)


def _commit(history: HistoryStore, op_id: str, hooks: list[CommitHook]) -> None:
    with history.transaction() as conn:
        for hook in hooks:
            hook(conn)
        history.commit(conn, op_id)


def _discard(history: HistoryStore, op_id: str) -> None:
    with history.transaction() as conn:
        history.discard(conn, op_id)


def _undo_entry(record_id: str, before: StoredRecord | None) -> dict[str, Any]:
    if before is None:
        return {"id": record_id, "before": None}
    return {"id": record_id, "before": {"payload": before.payload, "vector": before.vector}}


def _roll_back(
    op_id: str, undo: list[dict[str, Any]], store: VectorStore, history: HistoryStore
) -> Steps[None]:
    """Restore the before-images, then discard the pending rows and the journal entry.

    If restoring the store fails, the journal entry stays so that :func:`recover` retries.
    """
    try:
        absent = [u["id"] for u in undo if u["before"] is None]
        present = [
            VectorRecord(
                id=u["id"], vector=list(u["before"]["vector"]), payload=u["before"]["payload"]
            )
            for u in undo
            if u["before"] is not None
        ]
        if absent:
            yield call(store.delete, absent)
        if present:
            yield call(store.upsert, present)
    except Exception:
        log.exception("memoweave: rollback of write %s failed; it stays journaled", op_id)
        return
    try:
        yield call(_discard, history, op_id)
    except Exception:
        log.exception("memoweave: discarding write %s failed; it stays journaled", op_id)
