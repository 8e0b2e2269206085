"""Turns a strategy's actions into one journaled write.

Contract of :meth:`MemoryWriter.write`:

- every new text (adds, updates, supersessions) is embedded in ONE embedder call;
- texts whose md5 equals an active memory of the scope, or an earlier text of the same
  batch, are dropped (reported with event ``NONE``);
- actions naming ids that are not active memories of the scope are ignored (an LLM may
  invent ids); they never touch another scope;
- supersession keeps the old memory, marks it ``superseded`` with ``superseded_by`` and
  ``valid_until``; an LLM-decided delete is soft (status ``deleted``);
- everything is applied by :func:`memoweave.memory.transaction.apply_plan`, so a failure
  at any step leaves store, history and keyword index as they were.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memoweave.errors import EmbeddingError
from memoweave.filters import And, Comparison
from memoweave.index import SideIndexes
from memoweave.memory import items as it
from memoweave.memory.actions import (
    Action,
    AddMemory,
    SoftDeleteMemory,
    SupersedeMemory,
    UpdateMemory,
)
from memoweave.memory.history import HistoryEvent, HistoryStore, StoredMessage
from memoweave.memory.scope import Scope
from memoweave.memory.transaction import WritePlan, apply_plan
from memoweave.providers.embedder import Embedder
from memoweave.providers.vector_store import (
    EXPIRY_KEY,
    STATUS_KEY,
    StoredRecord,
    VectorRecord,
    VectorStore,
)


@dataclass
class WriteContext:
    """What every record of one ``add`` shares."""

    scope: Scope
    now: datetime
    observed_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    memory_type: str | None = None
    expiration: datetime | None = None
    messages: list[StoredMessage] = field(default_factory=list)


class MemoryWriter:
    """Plans and applies writes against one store, history and side indexes."""

    def __init__(
        self,
        store: VectorStore,
        embedder: Embedder,
        history: HistoryStore,
        indexes: SideIndexes | None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.history = history
        self.indexes = indexes

    def write(self, actions: Sequence[Action], ctx: WriteContext) -> list[dict[str, Any]]:
        """Apply ``actions`` for ``ctx.scope``; return mem0-style result entries."""
        targets = self._active_targets(actions, ctx.scope)
        actions = [a for a in actions if _target(a) is None or _target(a) in targets]
        texts, results = self._new_texts(actions, ctx.scope)
        vectors = self.embedder.embed([t for _, t in texts], purpose="document") if texts else []
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"the embedder returned {len(vectors)} vectors for {len(texts)} texts",
                hint="The embedder must return one vector per input text.",
            )
        embedded = {index: (text, vec) for (index, text), vec in zip(texts, vectors, strict=True)}
        plan = WritePlan(messages=list(ctx.messages), before=dict(targets))
        now = it.iso(ctx.now)
        for index, action in enumerate(actions):
            if index in embedded:
                text, vector = embedded[index]
                self._plan_action(plan, action, text, vector, ctx, results)
            elif isinstance(action, SoftDeleteMemory):
                self._plan_soft_delete(plan, action.id, ctx, results)
        self._add_index_hook(plan)
        apply_plan(plan, self.store, self.history, now)
        return results

    # -- planning ---------------------------------------------------------------------------

    def _active_targets(
        self, actions: Sequence[Action], scope: Scope
    ) -> dict[str, StoredRecord | None]:
        """The active memories of ``scope`` that ``actions`` name, fetched once with their
        vectors: they are both the filter for invented ids and the write's before-images."""
        ids = [t for a in actions if (t := _target(a)) is not None]
        ids += [s for a in actions if isinstance(a, AddMemory) for s in a.supersedes]
        if not ids:
            return {}
        found = self.store.get(list(dict.fromkeys(ids)), with_vectors=True)
        return {
            r.id: r
            for r in found
            if scope.contains(r.payload) and r.payload.get(STATUS_KEY) == it.STATUS_ACTIVE
        }

    def _new_texts(
        self, actions: Sequence[Action], scope: Scope
    ) -> tuple[list[tuple[int, str]], list[dict[str, Any]]]:
        """(action index, text) pairs to embed, after md5 dedupe; NONE results for dupes."""
        candidates: list[tuple[int, str]] = []
        for index, action in enumerate(actions):
            if isinstance(action, SoftDeleteMemory):
                continue
            text = " ".join(action.text.split())
            if text:
                candidates.append((index, text))
        hashes = [it.text_hash(t) for _, t in candidates]
        existing = self._existing_hashes(scope, hashes)
        seen: set[str] = set()
        kept: list[tuple[int, str]] = []
        results: list[dict[str, Any]] = []
        for (index, text), digest in zip(candidates, hashes, strict=True):
            if digest in seen or (
                digest in existing and not isinstance(actions[index], UpdateMemory)
            ):
                results.append({"id": existing.get(digest), "memory": text, "event": "NONE"})
                continue
            seen.add(digest)
            kept.append((index, text))
        return kept, results

    def _existing_hashes(self, scope: Scope, hashes: list[str]) -> dict[str, str]:
        if not hashes:
            return {}
        node = And(
            (
                scope.filter(),
                Comparison("hash", "in", tuple(dict.fromkeys(hashes))),
                Comparison(STATUS_KEY, "eq", it.STATUS_ACTIVE),
            )
        )
        page = self.store.list(filter=node, limit=max(len(hashes), 1) * 2)
        return {r.payload["hash"]: r.id for r in page.records}

    def _plan_action(
        self,
        plan: WritePlan,
        action: Action,
        text: str,
        vector: list[float],
        ctx: WriteContext,
        results: list[dict[str, Any]],
    ) -> None:
        """Plan one add / update / supersession; ``text`` is its normalised text."""
        now = it.iso(ctx.now)
        if isinstance(action, UpdateMemory):
            before = plan.before[action.id]
            assert before is not None
            old_text = before.payload.get("memory")
            payload = {
                **before.payload,
                "memory": text,
                "hash": it.text_hash(text),
                "updated_at": now,
            }
            if action.source_message_ids:
                payload["source_message_ids"] = list(action.source_message_ids)
            plan.upserts.append(VectorRecord(action.id, vector, payload))
            plan.events.append(
                self._event(action.id, "UPDATE", ctx, old_text, payload["memory"], payload)
            )
            results.append(
                {
                    "id": action.id,
                    "memory": payload["memory"],
                    "event": "UPDATE",
                    "previous_memory": old_text,
                }
            )
            return
        assert isinstance(action, (AddMemory, SupersedeMemory))
        new_id = str(uuid.uuid4())
        replaced = (action.id,) if isinstance(action, SupersedeMemory) else action.supersedes
        replaced = tuple(r for r in replaced if r in plan.before and plan.before[r] is not None)
        payload = self._new_payload(action, text, ctx, replaced)
        plan.before.setdefault(new_id, None)
        plan.upserts.append(VectorRecord(new_id, vector, payload))
        plan.events.append(self._event(new_id, "ADD", ctx, None, payload["memory"], payload))
        results.append({"id": new_id, "memory": payload["memory"], "event": "ADD"})
        for old_id in replaced:
            self._plan_supersede(plan, old_id, new_id, payload["memory"], ctx, results)

    def _plan_supersede(
        self,
        plan: WritePlan,
        old_id: str,
        new_id: str,
        new_text: str,
        ctx: WriteContext,
        results: list[dict[str, Any]],
    ) -> None:
        before = plan.before[old_id]
        assert before is not None and before.vector is not None
        now = it.iso(ctx.now)
        payload = {
            **before.payload,
            STATUS_KEY: it.STATUS_SUPERSEDED,
            "superseded_by": new_id,
            "valid_until": now,
            "updated_at": now,
        }
        plan.upserts.append(VectorRecord(old_id, list(before.vector), payload))
        event = self._event(
            old_id, "SUPERSEDE", ctx, before.payload.get("memory"), new_text, payload
        )
        plan.events.append(HistoryEvent(**{**event.__dict__, "superseded_by": new_id}))
        results.append(
            {
                "id": old_id,
                "memory": before.payload.get("memory"),
                "event": "SUPERSEDE",
                "superseded_by": new_id,
            }
        )

    def _plan_soft_delete(
        self, plan: WritePlan, memory_id: str, ctx: WriteContext, results: list[dict[str, Any]]
    ) -> None:
        before = plan.before.get(memory_id)
        if before is None or before.vector is None:
            return
        now = it.iso(ctx.now)
        payload = {
            **before.payload,
            STATUS_KEY: it.STATUS_DELETED,
            "valid_until": now,
            "updated_at": now,
        }
        plan.upserts.append(VectorRecord(memory_id, list(before.vector), payload))
        event = self._event(memory_id, "DELETE", ctx, before.payload.get("memory"), None, payload)
        plan.events.append(HistoryEvent(**{**event.__dict__, "is_deleted": True}))
        results.append({"id": memory_id, "memory": before.payload.get("memory"), "event": "DELETE"})

    def _new_payload(
        self,
        action: AddMemory | SupersedeMemory,
        text: str,
        ctx: WriteContext,
        replaced: tuple[str, ...],
    ) -> dict[str, Any]:
        extra = action.metadata if isinstance(action, AddMemory) else {}
        payload: dict[str, Any] = {
            **ctx.metadata,
            **extra,
            **ctx.scope.as_dict(),
            "memory": text,
            "hash": it.text_hash(text),
            "created_at": it.iso(ctx.now),
            "updated_at": None,
            "created_ts": ctx.now.timestamp(),
            "observed_at": it.iso(ctx.observed_at),
            "observed_ts": ctx.observed_at.timestamp(),
            "source_message_ids": list(action.source_message_ids),
            STATUS_KEY: it.STATUS_ACTIVE,
        }
        if isinstance(action, AddMemory):
            if action.actor_id:
                payload["actor_id"] = action.actor_id
            if action.role:
                payload["role"] = action.role
        if replaced:
            payload["supersedes"] = list(replaced)
        if ctx.memory_type:
            payload["memory_type"] = ctx.memory_type
        if ctx.expiration is not None:
            payload["expiration_date"] = it.iso(ctx.expiration)
            payload[EXPIRY_KEY] = ctx.expiration.timestamp()
        return payload

    def _event(
        self,
        memory_id: str,
        event: str,
        ctx: WriteContext,
        old: str | None,
        new: str | None,
        payload: dict[str, Any],
    ) -> HistoryEvent:
        return HistoryEvent(
            id=str(uuid.uuid4()),
            memory_id=memory_id,
            event=event,
            created_at=it.iso(ctx.now),
            old_memory=old,
            new_memory=new,
            updated_at=it.iso(ctx.now) if event != "ADD" else None,
            actor_id=payload.get("actor_id"),
            role=payload.get("role"),
            user_id=payload.get("user_id"),
            agent_id=payload.get("agent_id"),
            run_id=payload.get("run_id"),
        )

    def _add_index_hook(self, plan: WritePlan) -> None:
        indexes = self.indexes
        if indexes is None or not plan.upserts:
            return
        docs = [it.index_doc(r.id, r.payload) for r in plan.upserts]
        plan.on_commit.append(lambda conn: indexes.upsert(conn, docs))


def _target(action: Action) -> str | None:
    if isinstance(action, (UpdateMemory, SupersedeMemory, SoftDeleteMemory)):
        return action.id
    return None
