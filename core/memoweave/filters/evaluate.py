"""The reference evaluator: the executable definition of the filter semantics.

:func:`evaluate` walks the AST once per payload; :func:`compile_filter` turns an AST into
a closure that does the same work with the dispatch done up front (use it to post-filter
many payloads). Both agree exactly with the semantics documented in
:mod:`memoweave.filters.ast`:

- type families: ``bool`` is distinct from numbers, ``int`` equals ``float`` by value,
  strings equal strings; ``eq`` on a list-valued field is false;
- ``gt``/``gte``/``lt``/``lte`` are false unless the field is a non-``bool`` number;
- ``contains`` is a substring test on strings and an element ``eq`` on lists;
  ``icontains`` a ``casefold`` substring test on strings only;
- missing or ``None`` fields fail every comparison except ``ne`` and ``nin``;
  ``ne``/``nin``/``Not`` are exact negations of ``eq``/``in``/the child.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from memoweave.errors import FilterError
from memoweave.filters.ast import And, Comparison, FilterNode, Not, Or

Predicate = Callable[[Mapping[str, Any]], bool]

_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
}


def scalar_eq(field: Any, value: Any) -> bool:
    """``eq`` between a payload value and a filter scalar, by type family."""
    if isinstance(value, bool) or isinstance(field, bool):
        return field is value
    if isinstance(value, str):
        return isinstance(field, str) and field == value
    return isinstance(field, (int, float)) and field == value


def _in(field: Any, values: tuple[Any, ...]) -> bool:
    return any(scalar_eq(field, v) for v in values)


def _ordered(op: str, field: Any, value: Any) -> bool:
    if isinstance(field, bool) or not isinstance(field, (int, float)):
        return False
    return _ORDER[op](field, value)


def _contains(field: Any, value: Any) -> bool:
    if isinstance(field, str):
        return isinstance(value, str) and value in field
    if isinstance(field, list):
        return any(scalar_eq(item, value) for item in field)
    return False


def _icontains(field: Any, value: Any) -> bool:
    return (
        isinstance(field, str) and isinstance(value, str) and value.casefold() in field.casefold()
    )


def compare(op: str, field: Any, value: Any) -> bool:
    """Apply comparison ``op`` to a payload value (``None`` when the field is missing)."""
    if op == "eq":
        return field is not None and scalar_eq(field, value)
    if op == "ne":
        return field is None or not scalar_eq(field, value)
    if op == "in":
        return field is not None and _in(field, value)
    if op == "nin":
        return field is None or not _in(field, value)
    if op == "exists":
        return field is not None
    if field is None:
        return False
    if op in _ORDER:
        return _ordered(op, field, value)
    if op == "contains":
        return _contains(field, value)
    if op == "icontains":
        return _icontains(field, value)
    raise FilterError(f"unknown operator {op!r} in filter AST", details={"path": "$", "op": op})


def evaluate(node: FilterNode | None, payload: Mapping[str, Any]) -> bool:
    """Whether ``payload`` matches ``node`` (``None`` matches everything)."""
    if node is None:
        return True
    if isinstance(node, Comparison):
        return compare(node.op, payload.get(node.field), node.value)
    if isinstance(node, And):
        for child in node.children:  # noqa: SIM110 - a loop is faster than all()/any()
            if not evaluate(child, payload):
                return False
        return True
    if isinstance(node, Or):
        for child in node.children:  # noqa: SIM110 - a loop is faster than all()/any()
            if evaluate(child, payload):
                return True
        return False
    if isinstance(node, Not):
        return not evaluate(node.child, payload)
    raise FilterError(f"not a filter node: {type(node).__name__}", details={"path": "$"})


def compile_filter(node: FilterNode | None) -> Predicate:
    """A predicate equivalent to ``lambda payload: evaluate(node, payload)``, but faster."""
    if node is None:
        return lambda payload: True
    if isinstance(node, Comparison):
        return _compile_comparison(node.field, node.op, node.value)
    if isinstance(node, (And, Or)):
        return _compile_logical(node)
    if isinstance(node, Not):
        inner = compile_filter(node.child)
        return lambda payload: not inner(payload)
    raise FilterError(f"not a filter node: {type(node).__name__}", details={"path": "$"})


def _compile_logical(node: And | Or) -> Predicate:
    preds = tuple(compile_filter(child) for child in node.children)
    if len(preds) == 1:
        return preds[0]
    if len(preds) == 2:
        a, b = preds
        if isinstance(node, And):
            return lambda payload: a(payload) and b(payload)
        return lambda payload: a(payload) or b(payload)
    if isinstance(node, And):

        def conjunction(payload: Mapping[str, Any]) -> bool:
            for pred in preds:  # noqa: SIM110 - a loop is faster than all()
                if not pred(payload):
                    return False
            return True

        return conjunction

    def disjunction(payload: Mapping[str, Any]) -> bool:
        for pred in preds:  # noqa: SIM110 - a loop is faster than any()
            if pred(payload):
                return True
        return False

    return disjunction


def _compile_comparison(name: str, op: str, value: Any) -> Predicate:
    if op in ("ne", "nin"):  # exact negations of eq / in
        positive = _compile_comparison(name, "eq" if op == "ne" else "in", value)
        return lambda payload: not positive(payload)
    if op == "eq":
        if isinstance(value, bool):
            return lambda payload: payload.get(name) is value
        if isinstance(value, str):
            return lambda payload: isinstance(f := payload.get(name), str) and f == value
        return lambda payload: _is_number(f := payload.get(name)) and f == value
    if op == "exists":
        return lambda payload: payload.get(name) is not None
    if op == "in" and all(isinstance(v, str) for v in value):
        strings = frozenset(value)
        return lambda payload: isinstance(f := payload.get(name), str) and f in strings
    if op in _ORDER:
        order = _ORDER[op]
        return lambda payload: _is_number(f := payload.get(name)) and order(f, value)
    if op == "icontains" and isinstance(value, str):
        needle = value.casefold()
        return lambda payload: isinstance(f := payload.get(name), str) and needle in f.casefold()
    if op == "contains":
        return lambda payload: _contains(payload.get(name), value)
    return lambda payload: compare(op, payload.get(name), value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


__all__ = ["Predicate", "compare", "compile_filter", "evaluate", "scalar_eq"]
