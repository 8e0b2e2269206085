"""Errors, cursors and copying shared by the in-memory store's modules (its argument
checks are the shared ones of :mod:`memoweave.providers.store_checks`)."""

from __future__ import annotations

from typing import Any

from memoweave.errors import VectorStoreError
from memoweave.providers.store_checks import invalid_cursor

_CURSOR_PREFIX = "mem1:"


def fail(message: str, hint: str | None = None, **details: Any) -> VectorStoreError:
    """A ``VectorStoreError`` to raise (the store's files or state, not its arguments)."""
    return VectorStoreError(message, hint=hint, details=details)


def encode_cursor(seq: int) -> str:
    """The opaque cursor meaning "after the record with sequence number ``seq``"."""
    return f"{_CURSOR_PREFIX}{seq}"


def decode_cursor(cursor: str | None) -> int:
    """The sequence number of a cursor from :func:`encode_cursor` (``-1`` for ``None``)."""
    if cursor is None:
        return -1
    if isinstance(cursor, str) and cursor.startswith(_CURSOR_PREFIX):
        tail = cursor[len(_CURSOR_PREFIX) :]
        if tail.isdigit():
            return int(tail)
    raise invalid_cursor(cursor)


def clone(value: Any) -> Any:
    """A deep copy of a validated payload value."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value
