"""Stored payloads and the mem0-shaped items returned to callers.

A memory's payload (what the vector store keeps) is flat: the system fields below plus
the caller's metadata keys. Output items follow mem0's shape (``id``, ``memory``, ``hash``,
``metadata``, ``score``, ``created_at``, ``updated_at``, scope keys, ``actor_id``, ``role``)
plus memoweave's provenance and lifecycle fields.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from memoweave.errors import ValidationError
from memoweave.index import KeywordDoc
from memoweave.memory.scope import IDENTITY_KEYS
from memoweave.memory.validate import check_text
from memoweave.providers.vector_store import EXPIRY_KEY, STATUS_KEY
from memoweave.retrieval.profiles import MEMORY_KIND_KEY

STATUS_ACTIVE = "active"
STATUS_SUPERSEDED = "superseded"
STATUS_DELETED = "deleted"

SYSTEM_KEYS: frozenset[str] = frozenset(
    {
        "memory", "hash", "user_id", "agent_id", "run_id", "actor_id", "role",
        "created_at", "updated_at", "created_ts", "observed_at", "observed_ts",
        "source_message_ids", "valid_until", "superseded_by", "supersedes", STATUS_KEY,
        "expiration_date", EXPIRY_KEY, "memory_type", MEMORY_KIND_KEY, "id", "score",
        "metadata",
    }
)  # fmt: skip
"""Payload keys memoweave owns; metadata may not use them."""

_OUTPUT_KEYS = (
    "user_id", "agent_id", "run_id", "actor_id", "role", "memory_type", MEMORY_KIND_KEY,
    "source_message_ids",
    "observed_at", "valid_until", "superseded_by", "supersedes", "expiration_date",
)  # fmt: skip
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
MAX_METADATA_BYTES = 16_384
MAX_METADATA_DEPTH = 16
"""How deeply dicts and lists may nest inside metadata (a flat ``{"k": "v"}`` is 1)."""
_INT64 = (-(2**63), 2**63 - 1)


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


def iso(moment: datetime) -> str:
    """ISO 8601 with timezone."""
    return moment.astimezone(timezone.utc).isoformat()


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def memory_text(text: str) -> str:
    """A memory text as stored: control characters (C0, DEL, C1: NUL, terminal escapes)
    replaced by spaces, whitespace collapsed to single spaces. Message contents are kept
    as given; displays escape control characters themselves."""
    return " ".join(_CONTROL.sub(" ", text).split())


def text_hash(text: str) -> str:
    """mem0's content hash: md5 of the memory text."""
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def validate_metadata(metadata: Any) -> dict[str, Any]:
    """Check caller metadata: a dict of identifier keys, no system or identity keys."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ValidationError(
            f"metadata must be a dict, got {type(metadata).__name__}",
            hint="Pass metadata={'key': 'value'}.",
        )
    for key in metadata:
        if not isinstance(key, str) or not _KEY.match(key):
            raise ValidationError(
                f"metadata key {key!r} is not an identifier",
                hint="Use keys of letters, digits and underscores, starting with a letter.",
            )
        if key in IDENTITY_KEYS or key == "actor_id":
            raise ValidationError(
                f"metadata cannot set the identity key {key!r}",
                hint=f"Pass {key} as its own argument; identity never comes from metadata.",
            )
        if key in SYSTEM_KEYS:
            raise ValidationError(
                f"metadata key {key!r} is reserved by memoweave",
                hint="Rename the key, e.g. prefix it with 'app_'.",
            )
    _check_values(metadata)
    size = len(json.dumps(dict(metadata), ensure_ascii=False).encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise ValidationError(
            f"metadata is {size} bytes; the limit is {MAX_METADATA_BYTES}",
            hint="Keep large data in your own database and store a key here.",
        )
    return dict(metadata)


def _check_values(metadata: Mapping[str, Any]) -> None:
    """Every value is JSON that every store keeps exactly: strings (valid Unicode), 64-bit
    integers, finite floats, booleans, ``None``, and lists and string-keyed dicts of those
    nested at most :data:`MAX_METADATA_DEPTH` deep. Iterative, so depth cannot overflow."""
    hint = "Use strings, 64-bit integers, finite numbers, booleans, lists and dicts only."
    stack: list[tuple[str, Any, int]] = [("metadata", metadata, 1)]
    while stack:
        where, value, depth = stack.pop()
        if isinstance(value, str):
            check_text(where, value)
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, int):
            if not _INT64[0] <= value <= _INT64[1]:
                raise ValidationError(f"{where} is an integer beyond 64 bits", hint=hint)
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise ValidationError(f"{where} is {value!r}, not a finite number", hint=hint)
        elif isinstance(value, (Mapping, list, tuple)):
            if depth > MAX_METADATA_DEPTH:
                raise ValidationError(
                    f"metadata nests dicts and lists more than {MAX_METADATA_DEPTH} levels deep",
                    hint="Flatten the metadata; keep deep documents in your own database.",
                )
            if isinstance(value, Mapping):
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise ValidationError(f"{where} has a non-string key {key!r}", hint=hint)
                    stack.append((f"{where}.{check_text(where + ' key', key)}", item, depth + 1))
            else:
                stack.extend((f"{where}[{i}]", item, depth + 1) for i, item in enumerate(value))
        else:
            raise ValidationError(
                f"{where} is a {type(value).__name__}, not a JSON value", hint=hint
            )


def metadata_of(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The caller's metadata inside a stored payload."""
    return {k: v for k, v in payload.items() if k not in SYSTEM_KEYS}


def to_item(
    memory_id: str, payload: Mapping[str, Any], score: float | None = None
) -> dict[str, Any]:
    """The mem0-shaped dict for one stored memory."""
    item: dict[str, Any] = {
        "id": memory_id,
        "memory": payload.get("memory", ""),
        "hash": payload.get("hash"),
        "metadata": metadata_of(payload),
        "created_at": payload.get("created_at"),
        "updated_at": payload.get("updated_at"),
    }
    if score is not None:
        item["score"] = score
    for key in _OUTPUT_KEYS:
        if payload.get(key) is not None:
            item[key] = payload[key]
    return item


def index_doc(memory_id: str, payload: Mapping[str, Any]) -> KeywordDoc:
    """What the keyword and entity indexes keep of one stored payload."""
    return KeywordDoc(
        memory_id,
        payload.get("memory", "") or "",
        payload.get("user_id"),
        payload.get("agent_id"),
        payload.get("run_id"),
        payload.get(STATUS_KEY, STATUS_ACTIVE),
    )
