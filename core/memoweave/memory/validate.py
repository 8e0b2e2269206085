"""Argument checks shared by the public ``Memory`` methods; each raises ``ValidationError``
with a hint, before anything is read or written."""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping
from datetime import date, datetime, timezone
from typing import Any

from memoweave.errors import ValidationError
from memoweave.memory.scope import validate_identifier

MAX_QUERY_CHARS = 8_000
MAX_TOP_K = 1_000
_SURROGATE = re.compile("[\ud800-\udfff]")


def check_text(name: str, text: str) -> str:
    """``text`` must be valid Unicode: a lone surrogate (what undecodable bytes become
    with ``errors="surrogateescape"``) cannot be stored or sent to a model."""
    found = _SURROGATE.search(text)
    if found is not None:
        raise ValidationError(
            f"{name} contains the lone surrogate U+{ord(found.group()):04X} at index "
            f"{found.start()}, which is not valid Unicode",
            hint="Decode your input as UTF-8 (errors='replace' if it may be broken).",
        )
    return text


def check_text_size(name: str, chars: int, limit: int) -> None:
    """At most ``limit`` characters (``limits.max_text_chars`` of the configuration)."""
    if chars > limit:
        raise ValidationError(
            f"{name} is {chars} characters; the limit is {limit}",
            hint="Split the text into several calls, or raise limits.max_text_chars in the "
            "configuration.",
            details={"chars": chars, "limit": limit},
        )


def check_bool(name: str, value: Any) -> bool:
    """``value`` must be a real bool (not 0/1, not a string)."""
    if not isinstance(value, bool):
        raise ValidationError(
            f"{name} must be True or False, got {value!r}",
            hint=f"Pass {name}=True or {name}=False.",
        )
    return value


def check_memory_id(memory_id: Any) -> str:
    """Memory ids are UUID strings."""
    if not isinstance(memory_id, str):
        raise ValidationError(
            f"memory_id must be a string, got {type(memory_id).__name__}",
            hint="Use the id returned by add() or search().",
        )
    try:
        parsed = uuid.UUID(memory_id)
    except ValueError:
        raise ValidationError(
            f"memory_id {memory_id!r} is not a UUID",
            hint="Use the id returned by add() or search().",
        ) from None
    if str(parsed) != memory_id:
        raise ValidationError(
            f"memory_id {memory_id!r} is not in canonical form",
            hint=f"Use the lowercase hyphenated form {parsed}.",
        )
    return memory_id


def check_query(query: Any) -> str:
    """A non-blank string of at most 8,000 characters."""
    if not isinstance(query, str) or not query.strip():
        raise ValidationError(
            "query must be a non-empty string", hint="Pass the text to search for."
        )
    if len(query) > MAX_QUERY_CHARS:
        raise ValidationError(
            f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}",
            hint="Search with a shorter query (the last user turn, not the whole chat).",
        )
    return check_text("query", query)


def check_top_k(top_k: Any) -> int:
    """An integer from 1 to 1,000."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise ValidationError(
            f"top_k must be an integer from 1 to {MAX_TOP_K}, got {top_k!r}",
            hint="Pass top_k=10, for example; page with get_all(cursor=...) for more.",
        )
    return top_k


def check_threshold(threshold: Any) -> float | None:
    """``None`` or a finite number."""
    if threshold is None:
        return None
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float))
        or not math.isfinite(threshold)
    ):
        raise ValidationError(
            f"threshold must be a number, got {threshold!r}", hint="Pass threshold=0.3 or omit it."
        )
    return float(threshold)


def _as_datetime(name: str, value: Any) -> datetime:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValidationError(
                f"{name} {value!r} is not an ISO 8601 date",
                hint=f"Write {name} as '2025-12-31' or a datetime.",
            ) from None
    else:
        raise ValidationError(
            f"{name} must be a date, datetime or ISO string, got {type(value).__name__}",
            hint=f"Write {name} as '2025-12-31' or a datetime.",
        )
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def check_expiration(value: Any) -> datetime | None:
    """The expiry moment; a bare date expires at the end of that day (UTC)."""
    if value is None:
        return None
    moment = _as_datetime("expiration_date", value)
    if (isinstance(value, date) and not isinstance(value, datetime)) or (
        isinstance(value, str) and len(value.strip()) == 10
    ):
        moment = moment.replace(hour=23, minute=59, second=59)
    return moment


def check_timestamp(name: str, value: Any) -> datetime:
    """A date, datetime or ISO 8601 string as an aware datetime (naive means UTC)."""
    return _as_datetime(name, value)


def check_observed_at(value: Any) -> datetime | None:
    """When the conversation happened (defaults to now)."""
    return None if value is None else _as_datetime("observed_at", value)


def merge_scope_filters(
    filters: Any, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None
) -> dict[str, Any]:
    """Fold mem0-style ``user_id=`` arguments into ``filters``; conflicting values are an error."""
    if filters is not None and not isinstance(filters, Mapping):
        raise ValidationError(
            f"filters must be a dict, got {type(filters).__name__}",
            hint="Pass filters={'user_id': 'alice', ...}.",
        )
    merged = dict(filters or {})
    for key, value in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)):
        if value is None:
            continue
        validate_identifier(key, value)
        if key in merged and merged[key] != value:
            raise ValidationError(
                f"{key} is given twice with different values", hint=f"Pass {key} once, in filters."
            )
        merged[key] = value
    return merged
