"""Edits the application makes directly: ``update`` and hard ``delete``.

Both go through the same journaled write as ``add`` (:func:`apply_plan`), so store,
history and side indexes (keyword, entity links) stay in agreement when any step fails.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memoweave.memory import items as it
from memoweave.memory.history import HistoryEvent
from memoweave.memory.transaction import WritePlan, apply_plan
from memoweave.memory.writer import MemoryWriter
from memoweave.providers.vector_store import StoredRecord, VectorRecord


def _event(
    record_id: str, event: str, payload: dict[str, Any], now: str, **fields: Any
) -> HistoryEvent:
    return HistoryEvent(
        id=str(uuid.uuid4()),
        memory_id=record_id,
        event=event,
        created_at=now,
        updated_at=now,
        actor_id=payload.get("actor_id"),
        role=payload.get("role"),
        user_id=payload.get("user_id"),
        agent_id=payload.get("agent_id"),
        run_id=payload.get("run_id"),
        **fields,
    )


def update_memory(
    writer: MemoryWriter,
    before: StoredRecord,
    *,
    text: str | None,
    metadata: dict[str, Any] | None,
    now: datetime,
) -> dict[str, Any]:
    """Rewrite ``before``'s text (re-embedded) and/or replace its caller metadata."""
    assert before.vector is not None
    stamp = it.iso(now)
    system = {k: v for k, v in before.payload.items() if k in it.SYSTEM_KEYS}
    caller = it.metadata_of(before.payload) if metadata is None else metadata
    payload = {**caller, **system, "updated_at": stamp}
    vector = list(before.vector)
    if text is not None:
        text = " ".join(text.split())
        payload["memory"] = text
        payload["hash"] = it.text_hash(text)
        vector = writer.embedder.embed([text], purpose="document")[0]
    plan = WritePlan(before={before.id: before})
    plan.upserts.append(VectorRecord(before.id, vector, payload))
    plan.events.append(
        _event(
            before.id,
            "UPDATE",
            payload,
            stamp,
            old_memory=before.payload.get("memory"),
            new_memory=payload.get("memory"),
        )
    )
    indexes = writer.indexes
    if indexes is not None:
        doc = it.index_doc(before.id, payload)
        plan.on_commit.append(lambda conn: indexes.upsert(conn, [doc]))
    apply_plan(plan, writer.store, writer.history, stamp)
    return payload


def delete_memories(
    writer: MemoryWriter, records: Sequence[StoredRecord], *, now: datetime
) -> None:
    """Hard-delete ``records`` (fetched with vectors) in one write, recording DELETE events."""
    if not records:
        return
    stamp = it.iso(now)
    plan = WritePlan(before={r.id: r for r in records}, deletes=[r.id for r in records])
    plan.events.extend(
        _event(
            r.id, "DELETE", r.payload, stamp, old_memory=r.payload.get("memory"), is_deleted=True
        )
        for r in records
    )
    indexes = writer.indexes
    if indexes is not None:
        ids = [r.id for r in records]
        plan.on_commit.append(lambda conn: indexes.delete(conn, ids))
    apply_plan(plan, writer.store, writer.history, stamp)
