"""Parse the filter surface syntax into the AST of :mod:`memoweave.filters.ast`, and back.

:func:`parse_filter` is strict: every problem raises :class:`memoweave.errors.FilterError`
whose ``details["path"]`` is a JSON-path-like pointer at the offending node (for example
``$.OR[1].age.gte``); the message repeats the path. The result is normalised: a dict with
one key yields that key's node (no one-child ``And``), nested ``And``/``Or`` of the same
kind are flattened, one-child ``AND``/``OR`` lists collapse to the child, and ``in``/``nin``
values become tuples. :func:`to_dict` renders an AST back to canonical surface syntax, so
``parse_filter(to_dict(node)) == node`` for every parsed node.

Beyond the forms listed in :mod:`memoweave.filters.ast`, two spellings are accepted:
``{"field": {"eq": value}}`` (explicit ``eq``, the only way to match the literal string
``"*"``) and ``{"field": {"exists": true | false}}`` (``false`` means absent or null).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from memoweave.errors import FilterError
from memoweave.filters.ast import OPERATORS, And, Comparison, FilterNode, Not, Or, Scalar

FIELD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
LOGICAL_KEYS = ("AND", "OR", "NOT")
_NUMERIC_OPS = frozenset({"gt", "gte", "lt", "lte"})
_LIST_OPS = frozenset({"in", "nin"})
_NODE_TYPES = (Comparison, And, Or, Not)
MAX_FILTER_DEPTH = 32
"""How deeply the dicts and lists of one filter may nest (``{"AND": [{...}]}`` is 3)."""


def parse_filter(spec: Mapping[str, Any] | FilterNode | None) -> FilterNode | None:
    """Parse ``spec`` into a :data:`FilterNode`.

    ``None`` and ``{}`` mean "no filter" and return ``None``; an already-parsed node is
    returned unchanged. Raises ``FilterError`` (with ``details["path"]``) on any invalid input.
    """
    if spec is None:
        return None
    if isinstance(spec, _NODE_TYPES):
        return spec
    if not isinstance(spec, Mapping):
        _fail("$", f"a filter must be a dict, got {_type_name(spec)}")
    if not spec:
        return None
    if _nesting_exceeds(spec, MAX_FILTER_DEPTH):
        _fail("$", f"the filter nests dicts and lists more than {MAX_FILTER_DEPTH} levels deep")
    return _parse_object(spec, "$")


def _nesting_exceeds(value: Any, limit: int) -> bool:
    """Whether dicts and lists inside ``value`` nest deeper than ``limit`` (no recursion,
    so a hostile filter cannot exhaust the stack)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, Mapping) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, (Mapping, list, tuple)))
    return False


def _parse_object(spec: Mapping[Any, Any], path: str) -> FilterNode:
    if not spec:
        _fail(path, "empty filter object (remove it, or give at least one condition)")
    parts: list[FilterNode] = []
    for key, value in spec.items():
        if not isinstance(key, str):
            _fail(path, f"filter keys must be strings, got {_type_name(key)} {key!r}")
        sub = _child_path(path, key)
        if key in ("AND", "OR"):
            children = [_parse_node(c, f"{sub}[{i}]") for i, c in enumerate(_nonempty(value, sub))]
            parts.append(_combine(And if key == "AND" else Or, children))
        elif key == "NOT":
            parts.append(Not(_parse_not(value, sub)))
        else:
            parts.append(_parse_field(key, value, sub))
    return _combine(And, parts)


def _parse_node(value: Any, path: str) -> FilterNode:
    if isinstance(value, _NODE_TYPES):
        return value
    if not isinstance(value, Mapping):
        _fail(path, f"expected a filter dict, got {_type_name(value)}")
    return _parse_object(value, path)


def _parse_not(value: Any, path: str) -> FilterNode:
    if isinstance(value, (list, tuple)):
        children = [_parse_node(c, f"{path}[{i}]") for i, c in enumerate(_nonempty(value, path))]
        return _combine(Or, children)
    if isinstance(value, (Mapping, *_NODE_TYPES)):
        return _parse_node(value, path)
    _fail(path, f"NOT takes a filter dict or a non-empty list of them, got {_type_name(value)}")


def _nonempty(value: Any, path: str) -> Sequence[Any]:
    if not isinstance(value, (list, tuple)):
        _fail(path, f"expected a non-empty list of filter dicts, got {_type_name(value)}")
    if not value:
        _fail(path, "expected a non-empty list of filter dicts, got an empty list")
    return value


def _parse_field(field: str, value: Any, path: str) -> FilterNode:
    if not FIELD_RE.match(field):
        bare = field.strip("$").upper()
        hint = f"; did you mean {bare!r}?" if bare in LOGICAL_KEYS else ""
        _fail(path, f"invalid field name {field!r}: use letters, digits and _{hint}")
    if isinstance(value, str) and value == "*":
        return Comparison(field, "exists", True)
    if isinstance(value, Mapping):
        if not value:
            _fail(path, f"no operator given for field {field!r}")
        ops: list[FilterNode] = []
        for op, operand in value.items():
            ops.append(_parse_op(field, op, operand, _child_path(path, str(op))))
        return _combine(And, ops)
    if isinstance(value, (list, tuple)):
        hint = ""
        if field.upper() in LOGICAL_KEYS:
            hint = f" (logical operators are uppercase: {field.upper()!r})"
        _fail(path, f"a list is not a value; use {{'in': [...]}} or {{'contains': x}}{hint}")
    if value is None:
        _fail(path, "null is not a value; use {'NOT': {field: '*'}} to match absent or null")
    return Comparison(field, "eq", _scalar(value, path))


def _parse_op(field: str, op: Any, operand: Any, path: str) -> FilterNode:
    if op not in OPERATORS:
        problem = f"unknown operator {op!r}; valid operators: {', '.join(OPERATORS)}"
        _fail(path, problem, operator=op, valid_operators=list(OPERATORS))
    if op in _LIST_OPS:
        if not isinstance(operand, (list, tuple)) or not operand:
            _fail(path, f"{op!r} takes a non-empty list of scalars, got {_describe(operand)}")
        items = tuple(_scalar(v, f"{path}[{i}]") for i, v in enumerate(operand))
        return Comparison(field, op, items)
    if op in _NUMERIC_OPS:
        if isinstance(operand, bool) or not isinstance(operand, (int, float)):
            _fail(path, f"{op!r} takes a number, got {_type_name(operand)}")
        return Comparison(field, op, _scalar(operand, path))
    if op == "icontains":
        if not isinstance(operand, str):
            _fail(path, f"'icontains' takes a string, got {_type_name(operand)}")
        return Comparison(field, op, operand)
    if op == "exists":
        if operand is True or operand == "*":
            return Comparison(field, "exists", True)
        if operand is False:
            return Not(Comparison(field, "exists", True))
        _fail(path, f"'exists' takes true or false, got {_type_name(operand)}")
    return Comparison(field, op, _scalar(operand, path))  # eq, ne, contains


def _scalar(value: Any, path: str) -> Scalar:
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            _fail(path, f"non-finite number {value!r} is not a valid filter value")
        return value
    _fail(path, f"expected a string, number or boolean, got {_type_name(value)}")


def _combine(kind: type[And] | type[Or], children: Sequence[FilterNode]) -> FilterNode:
    """``kind(children)`` with same-kind children spliced in; one child is returned as is."""
    flat: list[FilterNode] = []
    for child in children:
        flat.extend(child.children if isinstance(child, kind) else (child,))
    return flat[0] if len(flat) == 1 else kind(tuple(flat))


def to_dict(node: FilterNode | None) -> dict[str, Any]:
    """Render ``node`` as canonical surface syntax (``{}`` for ``None``).

    Comparisons become ``{field: {op: value}}`` (``{field: "*"}`` for ``exists``), ``And``
    ``{"AND": [...]}``, ``Or`` ``{"OR": [...]}`` and ``Not`` ``{"NOT": {...}}``.
    """
    if node is None or node == And(()):
        return {}
    if isinstance(node, Comparison):
        if node.op == "exists":
            return {node.field: "*"}
        value = list(node.value) if isinstance(node.value, tuple) else node.value
        return {node.field: {node.op: value}}
    if isinstance(node, And):
        return {"AND": [to_dict(c) for c in node.children]}
    if isinstance(node, Or):
        return {"OR": [to_dict(c) for c in node.children]}
    if isinstance(node, Not):
        return {"NOT": to_dict(node.child)}
    raise FilterError(
        f"not a filter node: {_type_name(node)}", details={"path": "$", "type": _type_name(node)}
    )


def _child_path(path: str, key: str) -> str:
    return f"{path}.{key}" if FIELD_RE.match(key) else f"{path}[{json.dumps(key)}]"


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _describe(value: Any) -> str:
    if isinstance(value, (list, tuple)) and not value:
        return "an empty list"
    return _type_name(value)


def _fail(path: str, problem: str, **details: Any) -> NoReturn:
    raise FilterError(f"invalid filter at {path}: {problem}", details={"path": path, **details})


__all__ = ["FIELD_RE", "LOGICAL_KEYS", "parse_filter", "to_dict"]
