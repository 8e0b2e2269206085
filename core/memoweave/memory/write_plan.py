"""Turning prepared actions and the current records into one :class:`WritePlan` (no I/O).

:func:`build_plan` is the only place where memoweave decides what a write changes: the
payloads, the history events (:func:`_event`) and the index hooks (:meth:`_Builder.hooks`).
Its rules, applied to records read under the write's claims:

- an LLM-decided target (``UpdateMemory``, ``SupersedeMemory``, ``SoftDeleteMemory``,
  ``AddMemory.supersedes``) counts only while it is an active memory of the write's scope
  and not yet replaced by an earlier action of the same write. Otherwise (an invented id,
  another scope, a memory superseded or deleted by a write that landed meanwhile) it is
  never touched: a supersession stores its text as a new memory without superseding, an
  update stores its text as a new memory, a soft delete is dropped. So nothing is
  resurrected and nothing is superseded twice;
- an application edit or delete (``EditMemory``, ``DeleteMemory``) needs the memory to
  exist (within the scope when one is given), else :class:`NotFound` and nothing is written
  (``DeleteMemory.missing_ok`` skips it instead);
- a new text whose md5 equals an active memory of the scope, or a text stored earlier by
  the same write, is not stored again (event ``NONE``); updates are only checked against
  the same write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memoweave.errors import NotFound
from memoweave.index import SideIndexes
from memoweave.memory.actions import (
    AddMemory,
    DeleteMemory,
    EditMemory,
    SoftDeleteMemory,
    SupersedeMemory,
    UpdateMemory,
    WriteAction,
)
from memoweave.memory.clock import iso
from memoweave.memory.history import HistoryEvent, HistoryStore, StoredMessage
from memoweave.memory.ids import new_id
from memoweave.memory.payload import (
    STATUS_ACTIVE,
    STATUS_DELETED,
    STATUS_SUPERSEDED,
    SYSTEM_KEYS,
    index_doc,
    memory_text,
    metadata_of,
    text_hash,
)
from memoweave.memory.scope import Scope
from memoweave.memory.transaction import WritePlan
from memoweave.providers.vector_store import (
    EXPIRY_KEY,
    STATUS_KEY,
    EmbedText,
    StoredRecord,
    VectorRecord,
)
from memoweave.retrieval.neighbours import TURN_POSITION_KEY
from memoweave.retrieval.profiles import KIND_FACT, MEMORY_KIND_KEY


@dataclass
class WriteContext:
    """What every record of one write shares. ``scope`` is ``None`` for an application
    edit given no scope ids; ``forget_scope`` (``delete_all``) also drops the scope's
    message window and index rows."""

    scope: Scope | None
    now: datetime
    observed_at: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    memory_type: str | None = None
    expiration: datetime | None = None
    messages: list[StoredMessage] = field(default_factory=list)
    forget_scope: bool = False


@dataclass(frozen=True)
class PreparedWrite:
    """Actions with their new texts embedded (``texts``: action index → (text, vector))."""

    actions: tuple[WriteAction, ...]
    ctx: WriteContext
    texts: Mapping[int, tuple[str, list[float]]] = field(default_factory=dict)

    @property
    def targets(self) -> list[str]:
        """The existing ids the actions name, each once, in order."""
        ids: list[str] = []
        for action in self.actions:
            if isinstance(action, AddMemory):
                ids.extend(action.supersedes)
            else:
                ids.append(action.id)
        return list(dict.fromkeys(ids))

    def dedupe_hashes(self) -> list[str]:
        """The hashes of the new texts to check against the scope's active memories."""
        return [
            text_hash(text)
            for index, (text, _) in self.texts.items()
            if isinstance(self.actions[index], (AddMemory, SupersedeMemory, UpdateMemory))
        ]


@dataclass
class Written:
    """What a write did: mem0-style result entries and the new payload of each upserted id."""

    results: list[dict[str, Any]] = field(default_factory=list)
    payloads: dict[str, dict[str, Any]] = field(default_factory=dict)


def new_text(action: WriteAction) -> str | None:
    """The text ``action`` stores (:func:`memoweave.memory.payload.memory_text`), or ``None``."""
    if isinstance(action, (SoftDeleteMemory, DeleteMemory)):
        return None
    if isinstance(action, EditMemory) and action.text is None:
        return None
    text = memory_text(str(action.text))
    return text or None


def build_plan(
    prepared: PreparedWrite,
    records: Mapping[str, StoredRecord],
    existing_hashes: Mapping[str, str],
    history: HistoryStore,
    indexes: SideIndexes | None,
) -> tuple[WritePlan, Written]:
    """The journaled plan of ``prepared`` given the ``records`` its targets have now
    (read with vectors) and the scope's active memories by text hash."""
    builder = _Builder(prepared, records, existing_hashes)
    for index, action in enumerate(prepared.actions):
        builder.apply(index, action)
    builder.hooks(history, indexes)
    return builder.plan, builder.written


class _Builder:
    def __init__(
        self,
        prepared: PreparedWrite,
        records: Mapping[str, StoredRecord],
        existing: Mapping[str, str],
    ) -> None:
        self.ctx = prepared.ctx
        self.texts = prepared.texts
        self.records = records
        self.existing = existing
        self.now = iso(self.ctx.now)
        self.plan = WritePlan(messages=list(self.ctx.messages))
        self.written = Written()
        self.replaced: set[str] = set()
        self.stored_hashes: set[str] = set()

    # -- dispatch ---------------------------------------------------------------------------

    def apply(self, index: int, action: WriteAction) -> None:
        if isinstance(action, SoftDeleteMemory):
            if self._active(action.id):
                self._soft_delete(action.id)
        elif isinstance(action, DeleteMemory):
            self._hard_delete(action)
        elif isinstance(action, EditMemory):
            self._edit(index, action)
        elif index not in self.texts:
            return  # nothing to store (blank text)
        elif isinstance(action, UpdateMemory) and self._active(action.id):
            self._update(index, action)
        elif isinstance(action, AddMemory):
            self._add(index, action, tuple(s for s in action.supersedes if self._active(s)))
        else:  # a supersession, or an update whose target is gone: store as new
            assert isinstance(action, (SupersedeMemory, UpdateMemory))
            target = (action.id,) if self._active(action.id) else ()
            self._add(index, action, target if isinstance(action, SupersedeMemory) else ())

    def _active(self, memory_id: str) -> bool:
        record = self.records.get(memory_id)
        return (
            record is not None
            and memory_id not in self.replaced
            and self.ctx.scope is not None
            and self.ctx.scope.contains(record.payload)
            and record.payload.get(STATUS_KEY) == STATUS_ACTIVE
        )

    def _duplicate(self, text: str, *, against_scope: bool) -> bool:
        digest = text_hash(text)
        if digest in self.stored_hashes or (against_scope and digest in self.existing):
            self.written.results.append(
                {"id": self.existing.get(digest), "memory": text, "event": "NONE"}
            )
            return True
        self.stored_hashes.add(digest)
        return False

    # -- the changes ------------------------------------------------------------------------

    def _add(
        self,
        index: int,
        action: AddMemory | SupersedeMemory | UpdateMemory,
        replaced: tuple[str, ...],
    ) -> None:
        text, vector = self.texts[index]
        if self._duplicate(text, against_scope=True):
            return
        memory_id = new_id()
        if isinstance(action, AddMemory) and action.relations is not None:
            self.plan.triples[memory_id] = list(action.relations)
        payload = self._new_payload(action, text, tuple(dict.fromkeys(replaced)))
        self._upsert(memory_id, vector, payload, before=None)
        self._event(memory_id, "ADD", None, text, payload)
        self.written.results.append({"id": memory_id, "memory": text, "event": "ADD"})
        for old_id in dict.fromkeys(replaced):
            self._supersede(old_id, memory_id, text)

    def _update(self, index: int, action: UpdateMemory) -> None:
        text, vector = self.texts[index]
        if self._duplicate(text, against_scope=False):
            return
        before = self.records[action.id]
        payload = {**before.payload, "memory": text, "hash": text_hash(text)}
        payload["updated_at"] = self.now
        if action.source_message_ids:
            payload["source_message_ids"] = list(action.source_message_ids)
        old_text = before.payload.get("memory")
        self.replaced.add(action.id)
        self._upsert(action.id, vector, payload, before=before)
        self._event(action.id, "UPDATE", old_text, text, payload)
        self.written.results.append(
            {"id": action.id, "memory": text, "event": "UPDATE", "previous_memory": old_text}
        )

    def _supersede(self, old_id: str, successor_id: str, new_text: str) -> None:
        before = self.records[old_id]
        payload = {
            **before.payload,
            STATUS_KEY: STATUS_SUPERSEDED,
            "superseded_by": successor_id,
            "valid_until": self.now,
            "updated_at": self.now,
        }
        self.replaced.add(old_id)
        self._upsert(old_id, before.vector, payload, before=before)
        old_text = before.payload.get("memory")
        self._event(old_id, "SUPERSEDE", old_text, new_text, payload, superseded_by=successor_id)
        self.written.results.append(
            {"id": old_id, "memory": old_text, "event": "SUPERSEDE", "superseded_by": successor_id}
        )

    def _soft_delete(self, memory_id: str) -> None:
        before = self.records[memory_id]
        payload = {
            **before.payload,
            STATUS_KEY: STATUS_DELETED,
            "valid_until": self.now,
            "updated_at": self.now,
        }
        self.replaced.add(memory_id)
        self._upsert(memory_id, before.vector, payload, before=before)
        old_text = before.payload.get("memory")
        self._event(memory_id, "DELETE", old_text, None, payload, is_deleted=True)
        self.written.results.append({"id": memory_id, "memory": old_text, "event": "DELETE"})

    def _edit(self, index: int, action: EditMemory) -> None:
        before = self._existing_record(action.id)
        system = {k: v for k, v in before.payload.items() if k in SYSTEM_KEYS}
        caller = metadata_of(before.payload) if action.metadata is None else action.metadata
        payload = {**caller, **system, "updated_at": self.now}
        vector = before.vector
        if index in self.texts:
            text, vector = self.texts[index]
            payload["memory"] = text
            payload["hash"] = text_hash(text)
        old_text = before.payload.get("memory")
        self._upsert(action.id, vector, payload, before=before)
        self._event(action.id, "UPDATE", old_text, payload.get("memory"), payload)
        self.written.results.append(
            {
                "id": action.id,
                "memory": payload.get("memory"),
                "event": "UPDATE",
                "previous_memory": old_text,
            }
        )

    def _hard_delete(self, action: DeleteMemory) -> None:
        if action.missing_ok and action.id not in self.records:
            return
        before = self._existing_record(action.id)
        if action.id in self.plan.before:
            return  # named twice
        self.plan.before[action.id] = before
        self.plan.deletes.append(action.id)
        old_text = before.payload.get("memory")
        self._event(action.id, "DELETE", old_text, None, before.payload, is_deleted=True)
        self.written.results.append({"id": action.id, "memory": old_text, "event": "DELETE"})

    def _existing_record(self, memory_id: str) -> StoredRecord:
        record = self.records.get(memory_id)
        scope = self.ctx.scope
        if record is None or (scope is not None and not scope.contains(record.payload)):
            raise NotFound(f"no memory with id {memory_id}" + (" in this scope" if scope else ""))
        return record

    # -- records, events, hooks -------------------------------------------------------------

    def _upsert(
        self,
        memory_id: str,
        vector: list[float] | None,
        payload: dict[str, Any],
        *,
        before: StoredRecord | None,
    ) -> None:
        assert vector is not None, "targets are read with their vectors"
        self.plan.before.setdefault(memory_id, before)
        # an EmbedText (text the store embeds itself) must reach the store as it is
        copied = vector if isinstance(vector, EmbedText) else list(vector)
        self.plan.upserts.append(VectorRecord(memory_id, copied, payload))
        self.written.payloads[memory_id] = payload

    def _event(
        self,
        memory_id: str,
        event: str,
        old: str | None,
        new: str | None,
        payload: Mapping[str, Any],
        **extra: Any,
    ) -> None:
        self.plan.events.append(
            HistoryEvent(
                id=new_id(),
                memory_id=memory_id,
                event=event,
                created_at=self.now,
                old_memory=old,
                new_memory=new,
                updated_at=self.now if event != "ADD" else None,
                actor_id=payload.get("actor_id"),
                role=payload.get("role"),
                user_id=payload.get("user_id"),
                agent_id=payload.get("agent_id"),
                run_id=payload.get("run_id"),
                **extra,
            )
        )

    def _new_payload(
        self,
        action: AddMemory | SupersedeMemory | UpdateMemory,
        text: str,
        replaced: tuple[str, ...],
    ) -> dict[str, Any]:
        ctx = self.ctx
        assert ctx.scope is not None, "new memories always belong to a scope"
        observed = ctx.observed_at or ctx.now
        extra = action.metadata if isinstance(action, AddMemory) else {}
        payload: dict[str, Any] = {
            **ctx.metadata,
            **extra,
            **ctx.scope.as_dict(),
            "memory": text,
            "hash": text_hash(text),
            "created_at": self.now,
            "updated_at": None,
            "created_ts": ctx.now.timestamp(),
            "observed_at": iso(observed),
            "observed_ts": observed.timestamp(),
            "source_message_ids": list(action.source_message_ids),
            STATUS_KEY: STATUS_ACTIVE,
        }
        if isinstance(action, AddMemory):
            if action.actor_id:
                payload["actor_id"] = action.actor_id
            if action.role:
                payload["role"] = action.role
            if action.position is not None:
                payload[TURN_POSITION_KEY] = list(action.position)
        payload[MEMORY_KIND_KEY] = action.kind if isinstance(action, AddMemory) else KIND_FACT
        if replaced:
            payload["supersedes"] = list(replaced)
        if ctx.memory_type:
            payload["memory_type"] = ctx.memory_type
        if ctx.expiration is not None:
            payload["expiration_date"] = iso(ctx.expiration)
            payload[EXPIRY_KEY] = ctx.expiration.timestamp()
        return payload

    def hooks(self, history: HistoryStore, indexes: SideIndexes | None) -> None:
        """The index and message-window changes, run inside the history's commit."""
        plan = self.plan
        docs = [index_doc(r.id, r.payload) for r in plan.upserts]
        deleted = list(plan.deletes)
        scope = self.ctx.scope if self.ctx.forget_scope else None
        if indexes is not None and docs:
            plan.on_commit.append(lambda conn: indexes.upsert(conn, docs))
        if indexes is not None and deleted:
            plan.on_commit.append(lambda conn: indexes.delete(conn, deleted))
        if scope is not None:
            plan.on_commit.append(lambda conn: history.delete_scope_messages(conn, scope.as_dict()))
            if indexes is not None:
                plan.on_commit.append(lambda conn: indexes.delete_scope(conn, scope))
