"""The memoweave export format (JSONL, versioned) and the checks every imported line passes.

A file is a header line followed by one line per memory::

    {"format": "memoweave-export", "version": 1, "exported_at": "...", "count": 2, ...}
    {"id": "<uuid>", "memory": "Lives in Berlin", "user_id": "maya", "status": "active",
     "created_at": "...", "metadata": {...}, "history": [{"id": ..., "event": "ADD", ...}],
     "vector": [0.1, ...]}

A memory line carries the memory's id, text, scope ids, metadata, status and supersession
fields, provenance and timestamps; ``vector`` only when exported ``with_vectors``; its
history events (oldest first) in ``history``. Values that the store derives (``hash``,
``created_ts``, ``observed_ts``, ``expires_ts``) are recomputed on import, never trusted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memoweave.errors import MemoweaveError, ValidationError
from memoweave.memory.clock import iso, utcnow
from memoweave.memory.history import HistoryEvent
from memoweave.memory.metadata import validate_metadata
from memoweave.memory.payload import (
    STATUS_ACTIVE,
    STATUS_DELETED,
    STATUS_SUPERSEDED,
    SYSTEM_KEYS,
    metadata_of,
    text_hash,
)
from memoweave.memory.scope import Scope, validate_identifier
from memoweave.memory.validate import check_expiration, check_memory_id, check_timestamp
from memoweave.providers.vector_store import EXPIRY_KEY, STATUS_KEY

FORMAT = "memoweave-export"
VERSION = 1
EVENTS = ("ADD", "UPDATE", "SUPERSEDE", "DELETE")
STATUSES = (STATUS_ACTIVE, STATUS_SUPERSEDED, STATUS_DELETED)
DERIVED_KEYS = frozenset({"hash", "created_ts", "observed_ts", EXPIRY_KEY})
"""Payload keys computed from others; exported for reading, recomputed on import."""
_NOT_PAYLOAD = frozenset({"id", "score", "metadata"})
_TEXT_FIELDS = ("user_id", "agent_id", "run_id")
_OPTIONAL_STRINGS = ("role", "memory_type")
_EVENT_FIELDS = frozenset(
    {
        "id", "memory_id", "event", "old_memory", "new_memory", "created_at", "updated_at",
        "is_deleted", "actor_id", "role", "user_id", "agent_id", "run_id", "superseded_by",
    }
)  # fmt: skip
_RECORD_FIELDS = frozenset((SYSTEM_KEYS - _NOT_PAYLOAD) | {"id", "metadata", "history", "vector"})


@dataclass(frozen=True)
class ImportRecord:
    """One checked memory line: the payload to store, the vector (if given), its events."""

    line: int
    id: str
    payload: dict[str, Any]
    vector: list[float] | None
    events: tuple[HistoryEvent, ...]

    @property
    def scope(self) -> dict[str, str]:
        """The record's scope ids."""
        return {k: self.payload[k] for k in _TEXT_FIELDS if self.payload.get(k) is not None}


def header(*, count: int, with_vectors: bool, source: Mapping[str, Any]) -> dict[str, Any]:
    """The first line of an export."""
    from memoweave import __version__

    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": iso(utcnow()),
        "memoweave": __version__,
        "count": count,
        "with_vectors": with_vectors,
        "source": dict(source),
    }


def check_header(obj: Any) -> dict[str, Any]:
    """The header line, or ``ValidationError`` naming what is wrong with it."""
    if not isinstance(obj, Mapping) or obj.get("format") != FORMAT:
        raise ValidationError(
            f"the first line is not a {FORMAT} header",
            hint="Import a file written by `memoweave export` (its first line names the "
            "format), or use --from-mem0 for a mem0 installation.",
        )
    version = obj.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= VERSION:
        raise ValidationError(
            f"export format version {version!r} is not supported (this memoweave reads 1 to "
            f"{VERSION})",
            hint="Upgrade memoweave to read files written by a newer release.",
        )
    return dict(obj)


def export_line(
    memory_id: str,
    payload: Mapping[str, Any],
    events: Sequence[Mapping[str, Any]],
    vector: Sequence[float] | None,
) -> dict[str, Any]:
    """The JSON object of one memory: its payload's system fields, metadata and history."""
    line: dict[str, Any] = {"id": memory_id}
    for key in sorted(SYSTEM_KEYS - _NOT_PAYLOAD - {EXPIRY_KEY, "created_ts", "observed_ts"}):
        if payload.get(key) is not None:
            line[key] = payload[key]
    line["metadata"] = metadata_of(payload)
    line["history"] = [
        {k: v for k, v in event.items() if k in _EVENT_FIELDS and k != "memory_id"}
        for event in events
    ]
    if vector is not None:
        line["vector"] = [float(x) for x in vector]
    return line


def parse_line(obj: Any, line: int) -> ImportRecord:
    """Check one memory line and build what the importer writes.

    Raises:
        ValidationError: the first problem, worded for ``line N: <reason>`` reports.
    """
    if not isinstance(obj, Mapping):
        raise ValidationError(f"expected a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - _RECORD_FIELDS)
    if unknown:
        raise ValidationError(f"unknown field {unknown[0]!r}")
    memory_id = _field("id", obj.get("id"), check_memory_id)
    text = obj.get("memory")
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("memory must be a non-empty string")
    text = " ".join(text.split())
    scope = Scope.of(**{k: obj.get(k) for k in _TEXT_FIELDS}, operation="a record")
    payload: dict[str, Any] = {**_field("metadata", obj.get("metadata"), validate_metadata)}
    payload.update(scope.as_dict())
    payload["memory"] = text
    payload["hash"] = text_hash(text)
    created = _moment("created_at", obj.get("created_at"), required=True)
    observed = _moment("observed_at", obj.get("observed_at")) or created
    payload.update(
        created_at=iso(created),
        created_ts=created.timestamp(),
        observed_at=iso(observed),
        observed_ts=observed.timestamp(),
        updated_at=_iso_or_none("updated_at", obj.get("updated_at")),
    )
    status = obj.get(STATUS_KEY, STATUS_ACTIVE)
    if status not in STATUSES:
        raise ValidationError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
    payload[STATUS_KEY] = status
    if obj.get("actor_id") is not None:
        payload["actor_id"] = validate_identifier("actor_id", obj["actor_id"])
    for key in _OPTIONAL_STRINGS:
        if obj.get(key) is not None:
            if not isinstance(obj[key], str):
                raise ValidationError(f"{key} must be a string")
            payload[key] = obj[key]
    payload["source_message_ids"] = _strings("source_message_ids", obj.get("source_message_ids"))
    if obj.get("supersedes"):
        ids = _strings("supersedes", obj["supersedes"])
        payload["supersedes"] = [_field("supersedes", v, check_memory_id) for v in ids]
    if obj.get("superseded_by") is not None:
        payload["superseded_by"] = _field("superseded_by", obj["superseded_by"], check_memory_id)
    if obj.get("valid_until") is not None:
        payload["valid_until"] = _iso_or_none("valid_until", obj["valid_until"])
    if obj.get("expiration_date") is not None:
        expiry = _field("expiration_date", obj["expiration_date"], check_expiration)
        payload["expiration_date"] = iso(expiry)
        payload[EXPIRY_KEY] = expiry.timestamp()
    vector = _vector(obj.get("vector"))
    history = _list("history", obj.get("history"))
    events = tuple(_event(memory_id, payload, raw, i) for i, raw in enumerate(history))
    return ImportRecord(line, memory_id, payload, vector, events)


def _field(name: str, value: Any, check: Any) -> Any:
    """``check(value)``, with a failure re-worded to name ``name`` once."""
    try:
        return check(value)
    except MemoweaveError as exc:
        message = exc.message if name in exc.message else f"{name}: {exc.message}"
        raise ValidationError(message) from None


def _moment(name: str, value: Any, *, required: bool = False) -> Any:
    if value is None:
        if required:
            raise ValidationError(f"{name} is missing")
        return None
    return _field(name, value, lambda v: check_timestamp(name, v))


def _iso_or_none(name: str, value: Any) -> str | None:
    moment = _moment(name, value)
    return None if moment is None else iso(moment)


def _list(name: str, value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"{name} must be a list, got {type(value).__name__}")
    return value


def _strings(name: str, value: Any) -> list[str]:
    items = _list(name, value)
    if not all(isinstance(v, str) for v in items):
        raise ValidationError(f"{name} must be a list of strings")
    return list(items)


def _vector(value: Any) -> list[float] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise ValidationError("vector must be a non-empty list of numbers")
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        raise ValidationError("vector must contain only numbers")
    out = [float(x) for x in value]
    if not all(map(math.isfinite, out)):
        raise ValidationError("vector must contain finite numbers (no NaN or infinity)")
    return out


def _event(memory_id: str, payload: Mapping[str, Any], raw: Any, index: int) -> HistoryEvent:
    where = f"history[{index}]"
    if not isinstance(raw, Mapping):
        raise ValidationError(f"{where} must be a JSON object")
    unknown = sorted(set(raw) - _EVENT_FIELDS)
    if unknown:
        raise ValidationError(f"{where}: unknown field {unknown[0]!r}")
    if raw.get("memory_id") not in (None, memory_id):
        raise ValidationError(f"{where}.memory_id is not the record's id")
    event_id = raw.get("id")
    if not isinstance(event_id, str) or not event_id or len(event_id) > 128:
        raise ValidationError(f"{where}.id must be a non-empty string of at most 128 characters")
    if raw.get("event") not in EVENTS:
        raise ValidationError(f"{where}.event must be one of {', '.join(EVENTS)}")
    texts = {}
    for key in ("old_memory", "new_memory", "actor_id", "role", "superseded_by"):
        value = raw.get(key)
        if value is not None and not isinstance(value, str):
            raise ValidationError(f"{where}.{key} must be a string or null")
        texts[key] = value
    deleted = raw.get("is_deleted", False)
    if not isinstance(deleted, (bool, int)) or deleted not in (0, 1):
        raise ValidationError(f"{where}.is_deleted must be true or false")
    return HistoryEvent(
        id=event_id,
        memory_id=memory_id,
        event=raw["event"],
        created_at=iso(_moment(f"{where}.created_at", raw.get("created_at"), required=True)),
        updated_at=_iso_or_none(f"{where}.updated_at", raw.get("updated_at")),
        is_deleted=bool(deleted),
        user_id=payload.get("user_id"),
        agent_id=payload.get("agent_id"),
        run_id=payload.get("run_id"),
        **texts,
    )
