"""Input validation and copying shared by the in-memory store's modules."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from memoweave.errors import VectorStoreError
from memoweave.filters.parse import FIELD_RE
from memoweave.providers.vector_store import Payload

_CURSOR_PREFIX = "mem1:"


def fail(message: str, hint: str | None = None, **details: Any) -> VectorStoreError:
    """A ``VectorStoreError`` to raise."""
    return VectorStoreError(message, hint=hint, details=details)


def encode_cursor(seq: int) -> str:
    """The opaque cursor meaning "after the record with sequence number ``seq``"."""
    return f"{_CURSOR_PREFIX}{seq}"


def positive(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise fail(f"{name} must be a positive int, got {value!r}")
    return value


def check_id(id: Any) -> None:
    if not isinstance(id, str) or not id:
        raise fail(f"record ids must be non-empty strings, got {id!r}")


def check_ids(ids: Any) -> list[str]:
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence):
        raise fail(f"ids must be a list of strings, got {type(ids).__name__}")
    for id in ids:
        check_id(id)
    return list(ids)


def decode_cursor(cursor: str | None) -> int:
    if cursor is None:
        return -1
    if isinstance(cursor, str) and cursor.startswith(_CURSOR_PREFIX):
        tail = cursor[len(_CURSOR_PREFIX) :]
        if tail.isdigit():
            return int(tail)
    raise fail(f"invalid cursor {cursor!r}", "Pass back the next_cursor of a previous page.")


def check_payload(payload: Any, where: str) -> Payload:
    """A validated deep copy of ``payload`` (flat dict, JSON values, finite floats)."""
    if not isinstance(payload, Mapping):
        raise fail(f"{where}.payload must be a dict, got {type(payload).__name__}")
    out: Payload = {}
    for key, value in payload.items():
        if not isinstance(key, str) or not FIELD_RE.match(key):
            raise fail(f"{where}.payload key {key!r} must match [A-Za-z_][A-Za-z0-9_]*")
        out[key] = check_value(value, f"{where}.payload.{key}")
    return out


def check_value(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise fail(f"{where} is {value!r}; payload numbers must be finite")
        return value
    if isinstance(value, (list, tuple)):
        return [check_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise fail(f"{where}: nested dict keys must be strings")
        return {k: check_value(v, f"{where}.{k}") for k, v in value.items()}
    raise fail(f"{where} is a {type(value).__name__}, which is not JSON-serialisable")


def clone(value: Any) -> Any:
    """A deep copy of a validated payload value."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value
