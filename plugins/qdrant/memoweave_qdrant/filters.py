"""Translate the memoweave filter AST into an engine-neutral Qdrant condition tree.

Qdrant flattens arrays (a condition on ``tags`` matches when any element matches) and
cannot tell a string from a list of strings, while memoweave's semantics distinguish them
(``eq`` is false on a list, ``contains`` is substring on a string and element equality on
a list). The store therefore writes one bookkeeping key, :data:`LISTS_KEY`, holding the
names of the payload's list-valued keys, so "``f`` is a list" becomes the native condition
``LISTS_KEY == f``. With it every operator except ``icontains`` (and ``eq`` on integers
beyond 2**53, which Qdrant compares as floats) translates exactly:

- ``eq`` str/bool: ``MatchValue`` and not a list. ``eq`` int/float: ``Range(gte=v, lte=v)``
  and not a list (``MatchValue`` takes no floats, and a range matches ``1`` and ``1.0`` but
  never ``true``).
- ``ne`` / ``nin``: ``must_not`` of ``eq`` / ``in`` (true on missing and ``None`` fields).
- ``gt``.. ``lte``: ``Range`` and not a list (ranges never match bools or strings).
- ``contains`` str: (``MatchSubstring`` and not a list) or (``MatchValue`` and a list);
  ``contains`` of a non-string: element equality on a list.
- ``exists``: not ``IsEmpty`` (missing, null, ``[]``) or a list (``[]`` exists).
- ``icontains``: no native case-insensitive substring; translated to the superset "present
  and not a list" and marked inexact, so the store post-filters with
  :func:`memoweave.filters.evaluate`.

:func:`translate` returns ``(clause, exact)``: ``clause`` matches a superset of the AST's
records (``None`` = match everything) and ``exact`` says whether it is the exact set. Under
``NOT`` an inexact child cannot be negated natively (the complement of a superset is a
subset), so the ``NOT`` becomes ``None`` and the whole filter is post-filtered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from memoweave.filters.ast import And, Comparison, FilterNode, Not, Or

LISTS_KEY = "_mw_lists"
"""Bookkeeping payload key: sorted names of the record's list-valued payload keys."""
_MAX_EXACT_INT = 2**53


@dataclass(frozen=True)
class Match:
    """``key`` equals ``value`` (string or bool), or an element of it does."""

    key: str
    value: str | bool


@dataclass(frozen=True)
class Range:
    """``key`` is a number (not bool) within the bounds, or an element of it is."""

    key: str
    gt: float | None = None
    gte: float | None = None
    lt: float | None = None
    lte: float | None = None


@dataclass(frozen=True)
class Substring:
    """``key`` is a string containing ``text`` (case-sensitive), or an element is."""

    key: str
    text: str


@dataclass(frozen=True)
class IsEmpty:
    """``key`` is missing, ``None`` or an empty list."""

    key: str


@dataclass(frozen=True)
class Clause:
    """Qdrant's boolean filter: all ``must``, at least one ``should`` (if any), no ``must_not``."""

    must: tuple[Condition, ...] = ()
    should: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = field(default=())


Condition = Union[Match, Range, Substring, IsEmpty, Clause]
MATCH_NOTHING = Clause(must_not=(Clause(),))
"""A clause no record satisfies (``must_not`` of the always-true empty clause)."""


def translate(node: FilterNode | None) -> tuple[Clause | None, bool]:
    """The native superset of ``node`` and whether it is exact (``None``: match all)."""
    if node is None:
        return None, True
    cond, exact = _node(node)
    if cond is None or isinstance(cond, Clause):
        return cond, exact
    return Clause(must=(cond,)), exact


def _node(node: FilterNode) -> tuple[Condition | None, bool]:
    if isinstance(node, Comparison):
        return _comparison(node)
    if isinstance(node, And):
        parts = [_node(child) for child in node.children]
        must = tuple(cond for cond, _ in parts if cond is not None)
        exact = all(ok for _, ok in parts)
        if not must:
            return None, exact
        return (must[0] if len(must) == 1 else Clause(must=must)), exact
    if isinstance(node, Or):
        if not node.children:
            return MATCH_NOTHING, True
        parts = [_node(child) for child in node.children]
        exact = all(ok for _, ok in parts)
        if any(cond is None for cond, _ in parts):
            return None, exact
        should = tuple(cond for cond, _ in parts if cond is not None)
        return (should[0] if len(should) == 1 else Clause(should=should)), exact
    if isinstance(node, Not):
        cond, exact = _node(node.child)
        if not exact:
            return None, False
        if cond is None:
            return MATCH_NOTHING, True
        return Clause(must_not=(cond,)), True
    raise TypeError(f"not a filter node: {node!r}")


def _is_list(key: str) -> Match:
    return Match(LISTS_KEY, key)


def _scalar(key: str, cond: Condition) -> Clause:
    """``cond`` holds and ``key`` is not a list."""
    return Clause(must=(cond,), must_not=(_is_list(key),))


def _equals(key: str, value: object) -> tuple[Condition | None, bool]:
    """Native "``key`` or one of its elements equals ``value``" (memoweave equality)."""
    if isinstance(value, bool | str):
        return Match(key, value), True
    if isinstance(value, int | float):
        exact = not (isinstance(value, int) and abs(value) > _MAX_EXACT_INT)
        return Range(key, gte=float(value), lte=float(value)), exact
    raise TypeError(f"unsupported filter value {value!r}")


def _any_equals(key: str, values: tuple[object, ...]) -> tuple[Condition | None, bool]:
    parts = [_equals(key, value) for value in values]
    exact = all(ok for _, ok in parts)
    conds = tuple(cond for cond, _ in parts if cond is not None)
    return (conds[0] if len(conds) == 1 else Clause(should=conds)), exact


def _comparison(node: Comparison) -> tuple[Condition | None, bool]:
    key, op, value = node.field, node.op, node.value
    if op in ("eq", "ne", "in", "nin"):
        values = value if isinstance(value, tuple) else (value,)
        cond, exact = _any_equals(key, values)
        positive = _scalar(key, cond) if cond is not None else None
        if op in ("eq", "in"):
            return positive, exact
        if not exact or positive is None:
            return None, False
        return Clause(must_not=(positive,)), True
    if op in ("gt", "gte", "lt", "lte"):
        assert isinstance(value, int | float) and not isinstance(value, bool)
        exact = not (isinstance(value, int) and abs(value) > _MAX_EXACT_INT)
        return _scalar(key, Range(key, **{op: float(value)})), exact
    if op == "contains":
        if isinstance(value, str):
            in_string = _scalar(key, Substring(key, value))
            in_list = Clause(must=(Match(key, value), _is_list(key)))
            return Clause(should=(in_string, in_list)), True
        element, exact = _equals(key, value)
        if element is None:
            return None, False
        return Clause(must=(element, _is_list(key))), exact
    if op == "icontains":
        return Clause(must_not=(IsEmpty(key), _is_list(key))), False
    if op == "exists":
        return Clause(should=(Clause(must_not=(IsEmpty(key),)), _is_list(key))), True
    raise TypeError(f"unsupported filter operator {op!r}")


__all__ = [
    "LISTS_KEY",
    "MATCH_NOTHING",
    "Clause",
    "Condition",
    "IsEmpty",
    "Match",
    "Range",
    "Substring",
    "translate",
]
