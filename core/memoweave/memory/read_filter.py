"""The filter of every read (search and get_all): the caller's filter AND scope AND
lifecycle status AND expiry.

Callers write filters in the portable language (``memoweave.filters``); this module adds
what memoweave always enforces: the caller's scope, the lifecycle status (superseded and
soft-deleted memories hidden unless asked for) and expiry.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memoweave.filters import And, Comparison, FilterNode, Not, Or, parse_filter
from memoweave.memory.clock import utcnow
from memoweave.memory.payload import STATUS_ACTIVE, STATUS_SUPERSEDED
from memoweave.memory.scope import IDENTITY_KEYS, Scope
from memoweave.memory.validate import check_bool, merge_scope_filters
from memoweave.providers.vector_store import EXPIRY_KEY, STATUS_KEY


def visible_statuses(include_superseded: bool) -> tuple[str, ...]:
    """The lifecycle statuses a read returns."""
    return (STATUS_ACTIVE, STATUS_SUPERSEDED) if include_superseded else (STATUS_ACTIVE,)


def read_filter(
    filters: Mapping[str, Any] | None,
    scope: Scope,
    *,
    include_superseded: bool,
    show_expired: bool,
    now: datetime,
) -> FilterNode:
    """The full filter of a read: the caller's filter AND scope AND status AND expiry."""
    rest = {k: v for k, v in (filters or {}).items() if k not in IDENTITY_KEYS}
    parts: list[FilterNode] = [scope.filter()]
    user = parse_filter(rest) if rest else None
    if user is not None:
        parts.append(user)
    statuses = visible_statuses(include_superseded)
    parts.append(
        Comparison(STATUS_KEY, "eq", statuses[0])
        if len(statuses) == 1
        else Comparison(STATUS_KEY, "in", statuses)
    )
    if not show_expired:
        parts.append(
            Or(
                (
                    Not(Comparison(EXPIRY_KEY, "exists", True)),
                    Comparison(EXPIRY_KEY, "gt", now.timestamp()),
                )
            )
        )
    return And(tuple(parts))


def scoped_read(
    filters: Any,
    *,
    user_id: Any,
    agent_id: Any,
    run_id: Any,
    include_superseded: Any,
    show_expired: Any,
    operation: str,
) -> tuple[Scope, FilterNode]:
    """Validate a read's scope arguments; return its scope and its full filter."""
    check_bool("include_superseded", include_superseded)
    check_bool("show_expired", show_expired)
    merged = merge_scope_filters(filters, user_id=user_id, agent_id=agent_id, run_id=run_id)
    scope = Scope.from_filters(merged, operation=operation)
    node = read_filter(
        merged,
        scope,
        include_superseded=include_superseded,
        show_expired=show_expired,
        now=utcnow(),
    )
    return scope, node
