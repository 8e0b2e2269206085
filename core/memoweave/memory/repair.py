"""Repairs ``memoweave doctor --repair`` makes when store and history disagree.

Each repair adds what one side lacks from the other; none deletes a memory:

- :func:`rebuild_history` writes an ADD event for every stored memory the history does not
  know (from its payload: text, scope, actor, role, creation time) and indexes it;
- :func:`reembed_from_history` stores every memory the history records but the store lost,
  re-embedding its last text. The history keeps text, scope, actor, role, times and
  supersession, not the caller's metadata, expiry or source message ids: those are lost;
- :func:`reindex` re-indexes stored memories the keyword / entity indexes miss.

Each runs in one history transaction (and one store upsert), so running it again after a
crash simply does the rest.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from memoweave.index import SideIndexes
from memoweave.memory.clock import iso, utcnow
from memoweave.memory.history import HistoryEvent, HistoryStore
from memoweave.memory.payload import STATUS_ACTIVE, STATUS_SUPERSEDED, index_doc, text_hash
from memoweave.providers.embedder import Embedder
from memoweave.providers.vector_store import STATUS_KEY, StoredRecord, VectorRecord, VectorStore

_BATCH = 256


def _batches(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), _BATCH):
        yield items[start : start + _BATCH]


def rebuild_history(
    history: HistoryStore, indexes: SideIndexes | None, records: Sequence[StoredRecord]
) -> int:
    """ADD events (and index entries) for ``records``; returns how many were written."""
    now = iso(utcnow())
    for batch in _batches(records):
        events = [
            HistoryEvent(
                id=str(uuid.uuid4()),
                memory_id=r.id,
                event="ADD",
                created_at=str(r.payload.get("created_at") or now),
                new_memory=r.payload.get("memory"),
                actor_id=r.payload.get("actor_id"),
                role=r.payload.get("role"),
                user_id=r.payload.get("user_id"),
                agent_id=r.payload.get("agent_id"),
                run_id=r.payload.get("run_id"),
            )
            for r in batch
        ]
        _commit(history, indexes, now, events, [index_doc(r.id, r.payload) for r in batch])
    return len(records)


def reembed_from_history(
    store: VectorStore,
    embedder: Embedder,
    history: HistoryStore,
    indexes: SideIndexes | None,
    memory_ids: Sequence[str],
) -> int:
    """Store again the memories ``memory_ids`` (live in the history, missing from the
    store) from their events; returns how many were stored."""
    now = iso(utcnow())
    done = 0
    for batch in _batches(list(memory_ids)):
        payloads = {m: payload_from_events(history.events(m)) for m in batch}
        kept = {m: p for m, p in payloads.items() if p is not None}
        if not kept:
            continue
        ids = list(kept)
        vectors = embedder.embed([kept[m]["memory"] for m in ids], purpose="document")
        store.upsert([VectorRecord(m, list(v), kept[m]) for m, v in zip(ids, vectors, strict=True)])
        _commit(history, indexes, now, [], [index_doc(m, kept[m]) for m in ids])
        done += len(ids)
    return done


def reindex(indexes: SideIndexes, history: HistoryStore, records: Sequence[StoredRecord]) -> int:
    """(Re)index ``records`` in the keyword and entity indexes; returns how many."""
    for batch in _batches(records):
        with history.transaction() as conn:
            indexes.upsert(conn, [index_doc(r.id, r.payload) for r in batch])
    return len(records)


def payload_from_events(events: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The payload a memory had after ``events`` (oldest first), as far as the history
    knows it; ``None`` when there is no text to store."""
    text: str | None = None
    payload: dict[str, Any] = {STATUS_KEY: STATUS_ACTIVE}
    for event in events:
        kind = event["event"]
        if kind in ("ADD", "UPDATE") and event.get("new_memory"):
            text = event["new_memory"]
        if kind == "ADD":
            payload["created_at"] = event.get("created_at")
            for key in ("user_id", "agent_id", "run_id", "actor_id", "role"):
                if event.get(key) is not None:
                    payload[key] = event[key]
        elif kind == "SUPERSEDE":
            payload[STATUS_KEY] = STATUS_SUPERSEDED
            payload["superseded_by"] = event.get("superseded_by")
            payload["valid_until"] = event.get("updated_at") or event.get("created_at")
        if kind != "ADD":
            payload["updated_at"] = event.get("updated_at") or event.get("created_at")
    if not text:
        return None
    created = payload.get("created_at")
    payload.update({"memory": text, "hash": text_hash(text)})
    try:
        moment = datetime.fromisoformat(str(created))
    except ValueError:
        return payload
    stamp = moment.timestamp()
    payload.update(created_ts=stamp, observed_at=created, observed_ts=stamp)
    return payload


def _commit(
    history: HistoryStore,
    indexes: SideIndexes | None,
    now: str,
    events: Sequence[HistoryEvent],
    docs: Sequence[Any],
) -> None:
    op_id = f"repair-{uuid.uuid4()}"
    with history.transaction() as conn:
        history.begin(conn, op_id, now, [], events)
        if indexes is not None:
            indexes.upsert(conn, docs)
        history.commit(conn, op_id)
