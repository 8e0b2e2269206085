"""The clock of stored memories: timezone-aware UTC, written as ISO 8601."""

from __future__ import annotations

from datetime import datetime, timezone


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(timezone.utc)


def iso(moment: datetime) -> str:
    """ISO 8601 with timezone."""
    return moment.astimezone(timezone.utc).isoformat()
