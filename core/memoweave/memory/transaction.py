"""Journaled writes that keep the vector store and the SQLite history in agreement.

A :class:`WritePlan` lists every record to upsert, every id to hard-delete, the
before-image of every touched id, the history events and the messages. :func:`apply_plan`
(a pipeline, see :mod:`memoweave.runtime.steps`) runs it in three steps:

1. one SQLite transaction journals the before-images and writes events and messages as
   *pending* (invisible to readers);
2. the vector store applies the deletes and the upserts (told first what each touched id
   holds now, :meth:`~memoweave.providers.vector_store.VectorStore.expect_writes`: a new
   memory's id nothing);
3. one SQLite transaction runs the ``on_commit`` hooks (e.g. the keyword index) and makes
   the pending rows visible.

If step 2 or 3 fails, the store is restored from the before-images and the pending rows
are discarded, so the write either happened completely or not at all. If the process dies
between the steps, :func:`recover` (run when a ``Memory`` opens) finishes the rollback.

With a graph store, step 2 also applies the plan's graph change
(:func:`memoweave.memory.graph_writes.plan_graph`: relations added, closed or removed with
the memories); its undo is journaled in step 1 beside the before-images and replayed by
every rollback, so vector store, history and graph stay in agreement.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memoweave.errors import HistoryError, MemoweaveError, VectorStoreError
from memoweave.graph.terms import Triple
from memoweave.memory.graph_writes import GraphChange, plan_graph, undo_graph
from memoweave.memory.history import HistoryEvent, HistoryStore, StoredMessage
from memoweave.memory.ids import new_id
from memoweave.providers.graph_store import GraphStore
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
    triples: dict[str, list[Triple]] = field(default_factory=dict)
    """Relations a strategy extracted, by new memory id (others get the offline links)."""

    @property
    def empty(self) -> bool:
        return not (self.upserts or self.deletes or self.events or self.messages or self.on_commit)


def apply_plan(
    plan: WritePlan,
    store: VectorStore,
    history: HistoryStore,
    now: str,
    graph: GraphStore | None = None,
) -> Steps[None]:
    """The pipeline applying ``plan`` atomically across store, history and graph (module
    doc)."""
    if plan.empty:
        return
    touched = {r.id for r in plan.upserts} | set(plan.deletes)
    missing = touched - plan.before.keys()
    if missing:
        raise ValueError(f"write plan lacks before-images for {sorted(missing)}")
    op_id = new_id()
    undo = [_undo_entry(i, rec) for i, rec in plan.before.items()]
    change: GraphChange | None = None
    if graph is not None and (plan.upserts or plan.deletes):
        change = yield call(
            plan_graph,
            plan.upserts,
            plan.deletes,
            plan.before,
            graph,
            now_ts=datetime.fromisoformat(now).timestamp(),
            triples=plan.triples,
        )
        if change is not None and not change.empty:
            undo.append({"graph": change.undo_entry()})
    yield call(_journal, history, op_id, now, undo, plan)
    try:
        store.expect_writes(
            {i: r.payload if r is not None else None for i, r in plan.before.items()}
        )
        if plan.deletes:
            yield call(store.delete, plan.deletes)
        if plan.upserts:
            yield call(store.upsert, plan.upserts)
        if graph is not None and change is not None and not change.empty:
            yield call(change.apply, graph)
    except Exception as exc:
        yield from _roll_back(op_id, undo, store, history, graph)
        if isinstance(exc, MemoweaveError):
            raise
        raise VectorStoreError(f"vector store write failed: {exc}") from exc
    try:
        yield call(_commit, history, op_id, plan.on_commit)
    except Exception as exc:
        yield from _roll_back(op_id, undo, store, history, graph)
        if isinstance(exc, MemoweaveError):
            raise
        raise HistoryError(f"history commit failed: {exc}") from exc


def recover(
    store: VectorStore, history: HistoryStore, graph: GraphStore | None = None
) -> Steps[int]:
    """Roll back writes a crash left half-done; returns how many were rolled back."""
    pending = yield call(history.pending_journal)
    for op_id, undo in pending:
        yield from _roll_back(op_id, undo, store, history, graph)
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
    op_id: str,
    undo: list[dict[str, Any]],
    store: VectorStore,
    history: HistoryStore,
    graph: GraphStore | None = None,
) -> Steps[None]:
    """Restore the before-images (and the graph), then discard the pending rows and the
    journal entry.

    If restoring fails, the journal entry stays so that :func:`recover` retries. A graph
    undo met while no graph store is configured any more is skipped (with a warning).
    """
    records = [u for u in undo if "graph" not in u]
    graph_undo = [u["graph"] for u in undo if "graph" in u]
    if graph_undo and graph is None:
        log.warning("memoweave: write %s: no graph store configured, graph undo skipped", op_id)
        graph_undo = []
    try:
        absent = [u["id"] for u in records if u["before"] is None]
        present = [
            VectorRecord(
                id=u["id"], vector=list(u["before"]["vector"]), payload=u["before"]["payload"]
            )
            for u in records
            if u["before"] is not None
        ]
        if absent:
            yield call(store.delete, absent)
        if present:
            yield call(store.upsert, present)
        for entry in graph_undo:
            yield call(undo_graph, entry, graph)
    except Exception:
        log.exception("memoweave: rollback of write %s failed; it stays journaled", op_id)
        return
    try:
        yield call(_discard, history, op_id)
    except Exception:
        log.exception("memoweave: discarding write %s failed; it stays journaled", op_id)
