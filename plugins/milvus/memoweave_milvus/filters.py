"""Translate the memoweave filter AST into a Milvus boolean expression.

The translation returns a *superset* expression and says whether it is *exact*. When it
is not, the store runs the expression natively and post-filters the candidates with the
reference evaluator :func:`memoweave.filters.evaluate`, so results always agree with it.

How it stays correct under Milvus semantics:

- Negations are pushed down to the leaves (De Morgan), so the expression never uses
  ``not``: Milvus evaluates a missing JSON key or a type mismatch as SQL ``NULL`` and
  ``not NULL`` is not true, which would break ``NOT`` on missing fields. Each leaf is
  rendered for its polarity (``ne`` as ``P is null or P != v``).
- Milvus conflates JSON booleans with the numbers 0 and 1 (``payload["x"] == 1`` matches
  ``true``) and lets range operators match booleans; those leaves are marked inexact.
- ``LIKE`` has no escape for ``%``/``_`` on every Milvus flavour; a substring containing
  ``%``, ``_`` or a backslash is widened with the ``_`` wildcard and marked inexact.
- ``icontains`` and negated ranges/contains have no native form; they become a cheap
  superset (``P like "%"`` = "is a string", or no condition) and are post-filtered.
- Milvus servers may compare JSON ints and floats by type (their docs say so), which
  would break ``1 == 1.0``; against a server, numeric comparisons are therefore left to
  the post-filter (``native_numbers=False``). Milvus Lite compares by value.
- Scope keys (``user_id``...) compare against their indexed VARCHAR column, which holds
  the payload value when it is a string that fits; other keys use ``payload["key"]``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Union

from memoweave.errors import FilterError
from memoweave.filters.ast import And, Comparison, FilterNode, Not, Or
from memoweave_milvus.schema import SCOPE_COLUMNS, SCOPE_MAX_BYTES


class _Const:
    """TRUE / FALSE: expressions that need no rendering."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


TRUE = _Const("TRUE")
FALSE = _Const("FALSE")
Expr = Union[str, _Const]

_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INT64 = 2**63 - 1
_LIKE_SPECIAL = ("%", "_", "\\")


@dataclass(frozen=True)
class Translation:
    """A Milvus filter for an AST.

    expr: the expression to send (``""`` = no condition).
    empty: the filter provably matches nothing (skip the engine call).
    exact: ``expr`` matches exactly the filter; otherwise it is a superset to post-filter.
    """

    expr: str
    empty: bool
    exact: bool


def translate(node: FilterNode | None, *, native_numbers: bool = True) -> Translation:
    """Translate ``node`` (``None`` matches everything).

    ``native_numbers=False`` keeps numeric comparisons out of the engine (they become
    post-filtered): Milvus servers may compare JSON ints and floats by type, which would
    break ``1 == 1.0``; Milvus Lite compares them by value (checked by the tests).
    """
    if node is None:
        return Translation("", False, True)
    expr, exact = _node(node, False, native_numbers)
    if expr is FALSE:
        return Translation("", True, True)
    if expr is TRUE:
        return Translation("", False, exact)
    return Translation(str(expr), False, exact)


def string_literal(value: str) -> str:
    """A double-quoted Milvus string literal (escapes backslash, quote, newline, tab, CR)."""
    escaped = (
        value.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f'"{escaped}"'


def and_exprs(parts: list[Expr]) -> Expr:
    """Conjunction; ``TRUE`` parts vanish and any ``FALSE`` part wins."""
    if any(p is FALSE for p in parts):
        return FALSE
    kept = [p for p in parts if p is not TRUE]
    if not kept:
        return TRUE
    return kept[0] if len(kept) == 1 else " and ".join(f"({p})" for p in kept)


def or_exprs(parts: list[Expr]) -> Expr:
    """Disjunction; ``FALSE`` parts vanish and any ``TRUE`` part wins."""
    if any(p is TRUE for p in parts):
        return TRUE
    kept = [p for p in parts if p is not FALSE]
    if not kept:
        return FALSE
    return kept[0] if len(kept) == 1 else " or ".join(f"({p})" for p in kept)


def _node(node: FilterNode, negate: bool, numbers: bool) -> tuple[Expr, bool]:
    if isinstance(node, Not):
        return _node(node.child, not negate, numbers)
    if isinstance(node, (And, Or)):
        parts = [_node(child, negate, numbers) for child in node.children]
        exprs = [p[0] for p in parts]
        exact = all(p[1] for p in parts)
        conjunctive = isinstance(node, And) != negate  # De Morgan
        return (and_exprs(exprs) if conjunctive else or_exprs(exprs)), exact
    if isinstance(node, Comparison):
        if not isinstance(node.field, str) or not _FIELD.match(node.field):
            raise FilterError(f"invalid field name {node.field!r} in filter", details={"path": "$"})
        return _comparison(node, negate, numbers)
    raise FilterError(f"not a filter node: {type(node).__name__}", details={"path": "$"})


def _comparison(node: Comparison, negate: bool, numbers: bool) -> tuple[Expr, bool]:
    field, op, value = node.field, node.op, node.value
    if not numbers and _is_number(value if not isinstance(value, tuple) else None):
        return TRUE, False  # numeric comparison left to the post-filter
    if op in ("eq", "ne"):
        return _eq(field, value, negate != (op == "ne"))
    if op in ("in", "nin"):
        values = value if isinstance(value, tuple) else (value,)
        if not numbers and any(_is_number(v) for v in values):
            return TRUE, False
        return _in(field, values, negate != (op == "nin"))
    path = _json_path(field)
    if op == "exists":
        return (f"{path} is null" if negate else f"{path} is not null"), True
    if op in ("gt", "gte", "lt", "lte"):
        return _range(path, op, value, negate)
    if op == "contains":
        return _contains(path, value, negate)
    if op == "icontains":
        # No case-insensitive LIKE: keep string-valued fields, post-filter the rest.
        return (TRUE if negate else f'{path} like "%"'), False
    raise FilterError(f"unknown operator {op!r} in filter AST", details={"path": "$", "op": op})


def _json_path(field: str) -> str:
    return f'payload["{field}"]'


def _column_for(field: str, value: object) -> str | None:
    """The scope column to compare ``value`` against, if the column can decide it."""
    fits = isinstance(value, str) and len(value.encode("utf-8")) <= SCOPE_MAX_BYTES
    return field if field in SCOPE_COLUMNS and fits else None


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(value: object) -> str | None:
    """A Milvus numeric literal, or ``None`` when Milvus cannot represent ``value``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if abs(value) > _INT64:
        return None
    return repr(value) if isinstance(value, float) else str(value)


def _bool_like(value: object) -> bool:
    """Values Milvus may confuse with a JSON boolean (``True``/``False``, 0 and 1)."""
    return isinstance(value, bool) or (isinstance(value, (int, float)) and value in (0, 1))


def _eq(field: str, value: object, negate: bool) -> tuple[Expr, bool]:
    column = _column_for(field, value)
    target = column or _json_path(field)
    if isinstance(value, str):
        literal = string_literal(value)
    elif isinstance(value, bool):
        literal = "true" if value else "false"
    else:
        number = _number(value)
        if number is None:
            return TRUE, False
        literal = number
    exact = not _bool_like(value)
    if negate:
        if not exact:  # `!= 1` would also drop `true`, which ne keeps: no native superset
            return TRUE, False
        return f"{target} is null or {target} != {literal}", True
    return f"{target} == {literal}", exact


def _in(field: str, values: tuple[object, ...], negate: bool) -> tuple[Expr, bool]:
    if values and all(_column_for(field, v) for v in values):
        listed = ", ".join(string_literal(str(v)) for v in values)
        if negate:
            return f"{field} is null or {field} not in [{listed}]", True
        return f"{field} in [{listed}]", True
    parts = [_eq(field, v, negate) for v in values]
    exprs = [p[0] for p in parts]
    exact = all(p[1] for p in parts)
    return (and_exprs(exprs) if negate else or_exprs(exprs)), exact


_OPS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _range(path: str, op: str, value: object, negate: bool) -> tuple[Expr, bool]:
    number = _number(value)
    if negate or number is None:
        # NOT(x > v) also holds for strings, lists and booleans: no native superset.
        return TRUE, False
    v = float(value)  # type: ignore[arg-type]  # a number: checked by the caller
    # Milvus lets booleans (0/1) satisfy range comparisons; exact only when neither can.
    bools_can_match = {"gt": v < 1, "gte": v <= 1, "lt": v > 0, "lte": v >= 0}[op]
    return f"{path} {_OPS[op]} {number}", not bools_can_match


def _contains(path: str, value: object, negate: bool) -> tuple[Expr, bool]:
    if negate:
        return TRUE, False
    if isinstance(value, str):
        pattern = value
        exact = True
        for special in _LIKE_SPECIAL:
            if special in pattern:
                pattern = pattern.replace(special, "_")
                exact = False
        like = f"{path} like {string_literal('%' + pattern + '%')}"
        return f"{like} or json_contains({path}, {string_literal(value)})", exact
    if isinstance(value, bool):
        return f"json_contains({path}, {'true' if value else 'false'})", False
    number = _number(value)
    if number is None:
        return TRUE, False
    return f"json_contains({path}, {number})", not _bool_like(value)
