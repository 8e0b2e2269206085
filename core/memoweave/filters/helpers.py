"""Small builders for the filters the core writes itself."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memoweave.errors import FilterError
from memoweave.filters.ast import And, Comparison, FilterNode
from memoweave.filters.parse import parse_filter


def scope_filter(
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    run_id: str | None = None,
    actor_id: str | None = None,
) -> FilterNode | None:
    """``eq`` comparisons on the given scope ids, ANDed; ``None`` when none is given.

    Each given id must be a non-empty string, else ``FilterError`` (path ``$.<name>``).
    """
    scope = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id, "actor_id": actor_id}
    parts: list[FilterNode] = []
    for name, value in scope.items():
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            raise FilterError(
                f"invalid filter at $.{name}: {name} must be a non-empty string, got {value!r}",
                details={"path": f"$.{name}"},
            )
        parts.append(Comparison(name, "eq", value))
    return conjoin(*parts)


def conjoin(*nodes: FilterNode | Mapping[str, Any] | None) -> FilterNode | None:
    """AND of ``nodes`` (each parsed with :func:`parse_filter`), skipping ``None``.

    Nested ``And`` nodes are flattened; one node is returned as is; none gives ``None``.
    """
    flat: list[FilterNode] = []
    for spec in nodes:
        node = parse_filter(spec)
        if node is None:
            continue
        flat.extend(node.children if isinstance(node, And) else (node,))
    if not flat:
        return None
    return flat[0] if len(flat) == 1 else And(tuple(flat))


__all__ = ["conjoin", "scope_filter"]
