"""The portable filter language, parsed into a small immutable AST.

Surface syntax (a JSON-like dict, parsed by :func:`memoweave.filters.parse_filter`)::

    {"user_id": "alice"}                          # eq
    {"age": {"gte": 18, "lt": 65}}                # several operators on one field: AND
    {"tags": {"contains": "food"}}                 # list element / substring
    {"category": "*"}                              # field present (and not null)
    {"OR": [{...}, {...}]}, {"AND": [...]}, {"NOT": {...}}   # NOT also takes a list (NOR)

Several keys in one dict are ANDed. Field names match ``[A-Za-z_][A-Za-z0-9_]*``.

Operator semantics (the reference evaluator :func:`memoweave.filters.evaluate` is the
executable definition; every store must agree with it):

- ``eq`` / ``ne``: value is ``str``, ``int``, ``float`` or ``bool``. Equality is by type
  family: ``True`` never equals ``1``; ``1 == 1.0``. ``eq`` compares the whole field value,
  so it is false on a list-valued field (use ``contains``).
- ``in`` / ``nin``: value is a non-empty list of scalars; ``in`` is true when the field
  equals one of them (as ``eq``).
- ``gt`` ``gte`` ``lt`` ``lte``: value is an ``int`` or ``float`` (not ``bool``); false
  unless the field is a number (not ``bool``).
- ``contains``: value is a scalar. On a string field: case-sensitive substring (value must
  be a string). On a list field: some element equals the value (as ``eq``).
- ``icontains``: value is a string; case-insensitive (``str.casefold``) substring of a
  string field; false on other types.
- ``exists`` (written ``"*"``): the field is present and not ``None``.
- Missing or ``None`` fields: every comparison is false, except ``ne`` and ``nin`` which
  are true. ``NOT`` negates its child exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union

Scalar = Union[str, int, float, bool]
Operator = Literal[
    "eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "contains", "icontains", "exists"
]
OPERATORS: tuple[str, ...] = (
    "eq",
    "ne",
    "in",
    "nin",
    "gt",
    "gte",
    "lt",
    "lte",
    "contains",
    "icontains",
    "exists",
)


@dataclass(frozen=True)
class Comparison:
    """``field <op> value``; ``value`` is a tuple for ``in``/``nin`` and ``True`` for ``exists``."""

    field: str
    op: Operator
    value: Scalar | tuple[Scalar, ...]


@dataclass(frozen=True)
class And:
    """All children match (an empty ``And`` matches everything)."""

    children: tuple[FilterNode, ...]


@dataclass(frozen=True)
class Or:
    """At least one child matches."""

    children: tuple[FilterNode, ...]


@dataclass(frozen=True)
class Not:
    """The child does not match."""

    child: FilterNode


FilterNode = Union[Comparison, And, Or, Not]

__all__ = ["OPERATORS", "And", "Comparison", "FilterNode", "Not", "Operator", "Or", "Scalar"]
