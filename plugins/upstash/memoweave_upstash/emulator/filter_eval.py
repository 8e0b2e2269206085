"""Evaluate parsed Upstash filter expressions against a vector's metadata.

Semantics implemented by the emulator (modelled on Upstash's documentation; where the
documentation is silent the choice is stated here):

- A path that does not resolve (missing key, index out of range, key into a non-object)
  is *absent*; every comparison on an absent field is false, ``HAS NOT FIELD`` is true.
  A key whose value is JSON ``null`` is present (``HAS FIELD`` is true) but equals nothing.
- ``=`` compares by JSON type: booleans only equal booleans, numbers compare by value
  (``1 = 1.0``), strings by exact (case-sensitive) value. Arrays, objects and ``null``
  never equal a literal. ``IN`` is ``=`` against any of the literals.
- ``< <= > >=`` are true only on numbers (not booleans); the literal must be a number.
- ``GLOB`` matches strings with SQLite-style UNIX globbing: ``*`` any run, ``?`` one
  character, ``[abc]`` / ``[a-z]`` / ``[^a-z]`` one character of (not of) a set; there is
  no backslash escape inside a pattern (write ``[*]`` for a literal star).
- ``CONTAINS`` is true when the field is an array with an element ``=`` the literal.
- ``!=``, ``NOT IN``, ``NOT GLOB`` and ``NOT CONTAINS`` are the negation of their positive
  operator *among present fields*: true when the field is present and the positive
  operator is false (whatever the field's type), false when the field is absent.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from memoweave_upstash.emulator.filter_parser import (
    BoolOp,
    Compare,
    Expr,
    FilterSyntaxError,
    HasField,
    Path,
)

_ABSENT = object()
_ORDER = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def validate(expr: Expr | None) -> None:
    """Reject well-formed but meaningless filters (e.g. ``a < 'x'``) like the service."""
    if expr is None:
        return
    if isinstance(expr, BoolOp):
        for child in expr.children:
            validate(child)
    elif isinstance(expr, Compare) and expr.op in _ORDER:
        value = expr.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise FilterSyntaxError(
                f"operator {expr.op} on {expr.path.text!r} needs a number, got {value!r}"
            )


def resolve(metadata: Any, path: Path) -> Any:
    """The value at ``path`` in ``metadata``, or the private absent marker."""
    value = metadata
    for segment in path.segments:
        if isinstance(segment, str):
            if not isinstance(value, dict) or segment not in value:
                return _ABSENT
            value = value[segment]
            continue
        if not isinstance(value, list):
            return _ABSENT
        index = segment if isinstance(segment, int) else len(value) - segment[1]
        if not 0 <= index < len(value):
            return _ABSENT
        value = value[index]
    return value


def literal_eq(value: Any, literal: Any) -> bool:
    """``=`` between a metadata value and a filter literal, by JSON type."""
    if isinstance(literal, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(literal, bool) and value is literal
    if isinstance(literal, str):
        return isinstance(value, str) and value == literal
    return isinstance(value, (int, float)) and value == literal


def _positive(op: str, value: Any, literal: Any) -> bool:
    if op == "=":
        return literal_eq(value, literal)
    if op == "IN":
        return any(literal_eq(value, item) for item in literal)
    if op == "GLOB":
        return isinstance(value, str) and glob_match(literal, value)
    if op == "CONTAINS":
        return isinstance(value, list) and any(literal_eq(item, literal) for item in value)
    raise FilterSyntaxError(f"unknown operator {op}")


def matches(expr: Expr | None, metadata: Any) -> bool:
    """Whether ``metadata`` (a dict, or ``None`` for no metadata) satisfies ``expr``."""
    if expr is None:
        return True
    if isinstance(expr, BoolOp):
        if expr.op == "AND":
            return all(matches(child, metadata) for child in expr.children)
        return any(matches(child, metadata) for child in expr.children)
    value = resolve(metadata if metadata is not None else {}, expr.path)
    if isinstance(expr, HasField):
        return (value is _ABSENT) == expr.negated
    if value is _ABSENT:
        return False
    op = expr.op
    if op in _ORDER:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return bool(_ORDER[op](value, expr.value))
    if op == "!=":
        return not literal_eq(value, expr.value)
    if op.startswith("NOT "):
        return not _positive(op[4:], value, expr.value)
    return _positive(op, value, expr.value)


def glob_match(pattern: str, text: str) -> bool:
    """SQLite-style ``GLOB``: case-sensitive, whole-string match."""
    return _compile_glob(pattern).fullmatch(text) is not None


@lru_cache(maxsize=512)
def _compile_glob(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "*":
            out.append(".*")
            i += 1
        elif ch == "?":
            out.append(".")
            i += 1
        elif ch == "[":
            cls, end = _char_class(pattern, i)
            out.append(cls)
            i = end
        else:
            out.append(re.escape(ch))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _char_class(pattern: str, start: int) -> tuple[str, int]:
    """Translate ``[...]`` at ``start``; an unterminated ``[`` is a literal character."""
    i = start + 1
    negate = i < len(pattern) and pattern[i] == "^"
    if negate:
        i += 1
    items: list[str] = []
    first = True
    while i < len(pattern) and (pattern[i] != "]" or first):
        ch = pattern[i]
        if i + 2 < len(pattern) and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            lo, hi = ch, pattern[i + 2]
            if lo <= hi:
                items.append(f"{re.escape(lo)}-{re.escape(hi)}")
            i += 3
        else:
            items.append(re.escape(ch))
            i += 1
        first = False
    if i >= len(pattern):
        return re.escape("["), start + 1
    body = "".join(items)
    if not body:
        return ("[\\s\\S]" if negate else "(?!)"), i + 1
    return f"[{'^' if negate else ''}{body}]", i + 1


__all__ = ["glob_match", "literal_eq", "matches", "resolve", "validate"]
