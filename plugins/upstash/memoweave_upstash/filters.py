"""Translate the memoweave filter AST into Upstash Vector's SQL-like filter string.

:func:`translate` returns a :class:`Translation`: the server-side ``expression`` (``""`` for
no filter), whether it is ``exact`` (matches precisely the records the reference evaluator
accepts) and whether the filter can match ``nothing`` at all. An inexact expression is
always a *superset*; the store then post-filters with :func:`memoweave.filters.evaluate`
and over-fetches, so nothing is silently dropped.

The store writes no top-level ``None`` into Upstash metadata (see :mod:`.payloads`), so
"missing or ``None``" is exactly ``HAS NOT FIELD``. Mapping (``k`` a field, ``v`` a
literal)::

    eq v         k = v                          exact
    ne v         (HAS NOT FIELD k OR k != v)     exact
    in (a, b)    k IN (a, b)                     exact
    nin (a, b)   (HAS NOT FIELD k OR k NOT IN (a, b))   exact
    gt/gte/lt/lte v   k > v ...                  exact (numbers only on both sides)
    contains v   (k CONTAINS 'v' OR k GLOB '*v*')   exact (element of a list / substring)
    icontains v  HAS FIELD k                     superset (GLOB is case-sensitive)
    exists       HAS FIELD k                     exact
    NOT          pushed down (De Morgan); NOT eq/in/exists flip exactly, NOT of a range
                 or (i)contains has no Upstash form and becomes "no filter" (superset)

String literals are single-quoted; a value holding ``'`` but no ``"`` or ``\\`` is
double-quoted instead, otherwise ``\\`` and ``'`` are backslash-escaped. GLOB patterns escape
``*``, ``?`` and ``[`` as ``[*]``, ``[?]``, ``[[]``. Floats are written in plain decimal
notation (no exponent); NaN and infinity have no literal and widen to a superset.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal

from memoweave.filters.ast import And, Comparison, FilterNode, Not, Or, Scalar

_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RESERVED = frozenset(
    {"AND", "OR", "NOT", "IN", "GLOB", "CONTAINS", "HAS", "FIELD", "TRUE", "FALSE"}
)
_NEGATED = {"eq": "ne", "ne": "eq", "in": "nin", "nin": "in"}
_ORDER = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


@dataclass(frozen=True)
class Translation:
    """An Upstash filter string for a memoweave filter (see the module docstring)."""

    expression: str
    exact: bool
    nothing: bool = False


@dataclass(frozen=True)
class _Part:
    expr: str | None  # None: no constraint (matches everything)
    exact: bool
    never: bool = False


_ALL = _Part(None, True)
_ALL_INEXACT = _Part(None, False)
_NEVER = _Part(None, True, never=True)


def translate(node: FilterNode | None) -> Translation:
    """The Upstash filter for ``node`` (``None`` → no filter)."""
    if node is None:
        return Translation("", True)
    part = _translate(node, negate=False)
    return Translation(part.expr or "", part.exact, part.never)


def quote(value: str) -> str:
    """``value`` as an Upstash string literal."""
    if "\\" not in value and "'" not in value:
        return f"'{value}'"
    if "\\" not in value and '"' not in value:
        return f'"{value}"'
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def glob_escape(value: str) -> str:
    """``value`` with GLOB wildcards made literal."""
    return re.sub(r"[*?\[]", lambda m: f"[{m.group()}]", value)


def literal(value: Scalar) -> str | None:
    """``value`` as an Upstash literal; ``None`` when it has none (NaN, infinity)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        text = format(Decimal(repr(value)), "f")
        return text if "." in text else f"{text}.0"
    return quote(value)


def _translate(node: FilterNode, *, negate: bool) -> _Part:
    if isinstance(node, Not):
        return _translate(node.child, negate=not negate)
    if isinstance(node, (And, Or)):
        parts = [_translate(child, negate=negate) for child in node.children]
        conjunction = isinstance(node, And) != negate  # De Morgan
        return _and(parts) if conjunction else _or(parts)
    if isinstance(node, Comparison):
        return _comparison(node, negate)
    raise TypeError(f"not a filter node: {type(node).__name__}")


def _and(parts: list[_Part]) -> _Part:
    if any(p.never for p in parts):
        return _NEVER
    exprs = [p.expr for p in parts if p.expr is not None]
    exact = all(p.exact for p in parts)
    if not exprs:
        return _Part(None, exact)
    return _Part(exprs[0] if len(exprs) == 1 else f"({' AND '.join(exprs)})", exact)


def _or(parts: list[_Part]) -> _Part:
    parts = [p for p in parts if not p.never]
    if not parts:
        return _NEVER
    exact = all(p.exact for p in parts)
    if any(p.expr is None for p in parts):
        return _Part(None, exact)
    exprs = [p.expr for p in parts if p.expr is not None]
    return _Part(exprs[0] if len(exprs) == 1 else f"({' OR '.join(exprs)})", exact)


def _comparison(node: Comparison, negate: bool) -> _Part:
    field, value = node.field, node.value
    op: str = node.op
    if not _FIELD.fullmatch(field) or field.upper() in _RESERVED:
        return _ALL_INEXACT  # no Upstash identifier for it: post-filter
    if negate:
        if op in _NEGATED:
            op = _NEGATED[op]
        elif op == "exists":
            return _Part(f"HAS NOT FIELD {field}", True)
        else:  # NOT of a range or (i)contains is also true on other types: no Upstash form
            return _ALL_INEXACT
    has = f"HAS FIELD {field}"
    if op == "exists":
        return _Part(has, True)
    if op == "icontains":
        return _Part(has, False)
    if op in ("in", "nin"):
        items = [literal(v) for v in value]  # type: ignore[union-attr]  # a list for in/nin (parser)
        if any(item is None for item in items):
            return _Part(has, False) if op == "in" else _ALL_INEXACT
        listed = ", ".join(items)  # type: ignore[arg-type]  # None only for unrepresentable, handled
        if op == "in":
            return _Part(f"{field} IN ({listed})", True)
        return _Part(f"(HAS NOT FIELD {field} OR {field} NOT IN ({listed}))", True)
    lit = literal(value)  # type: ignore[arg-type]  # a scalar for the other operators (parser)
    if lit is None:
        return _ALL_INEXACT if op == "ne" else _Part(has, False)
    if op == "eq":
        return _Part(f"{field} = {lit}", True)
    if op == "ne":
        return _Part(f"(HAS NOT FIELD {field} OR {field} != {lit})", True)
    if op in _ORDER:
        return _Part(f"{field} {_ORDER[op]} {lit}", True)
    if op == "contains":
        if isinstance(value, str):
            pattern = quote(f"*{glob_escape(value)}*")
            return _Part(f"({field} CONTAINS {lit} OR {field} GLOB {pattern})", True)
        return _Part(f"{field} CONTAINS {lit}", True)
    raise ValueError(f"unknown filter operator {op!r}")


__all__ = ["Translation", "glob_escape", "literal", "quote", "translate"]
