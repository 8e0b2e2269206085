"""Filter AST -> SQL over the records table, exact wherever SQLite can be.

Every record keeps its payload as JSON text (``payload``) plus typed copies of the keys
every read filters on (:data:`COLUMNS`): a ``TEXT`` column holds the value when it is a
string, a numeric column when it is a non-``bool`` number that fits SQLite's 64-bit
integers; otherwise the column is ``NULL`` and the key's bit in ``mw_other`` is set when
the payload has a non-null value of another type. Comparisons on those keys use the
indexed columns (and the JSON only for the rare rows whose bit is set); every other key
is read with ``json_type`` / ``json_extract`` / ``json_each``, whose types (``text``,
``integer``, ``real``, ``true``, ``false``, ``null``, ``array``, ``object``) are exactly
the type families of :mod:`memoweave.filters`.

Negation is pushed down to the comparisons (negation normal form), so a positive
comparison may evaluate to ``NULL`` for "no" (WHERE treats it as false) and can use an
index, while a negated one is ``NOT COALESCE(positive, 0)``, which is true for missing
keys as ``ne`` / ``nin`` / ``NOT`` require. ``icontains`` uses ``mw_casefold``, a SQL
function wrapping ``str.casefold`` (registered on every connection).

Not exact, so post-filtered with :func:`memoweave.filters.evaluate` by the store: integers
beyond 64 bits and floats beyond 2**53 in a filter (SQLite reads such JSON numbers as
doubles), and strings holding NUL characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memoweave.filters.ast import And, Comparison, FilterNode, Not, Or, Scalar
from memoweave.providers.vector_store import EXPIRY_KEY, HASH_KEY, SCOPE_KEYS, STATUS_KEY

TEXT, NUMBER = "text", "number"
COLUMNS: dict[str, tuple[str, int]] = {
    key: (family, 1 << bit)
    for bit, (key, family) in enumerate(
        [*((k, TEXT) for k in (*SCOPE_KEYS, STATUS_KEY)), (EXPIRY_KEY, NUMBER), (HASH_KEY, TEXT)]
    )
}
"""Payload keys copied into typed, indexed columns: key -> (family, bit in ``mw_other``).
New keys go at the end: a key's bit is stored in every row."""
_INT64 = 2**63
_EXACT_FLOAT = 2.0**53
_NUMBER_TYPES = "('integer', 'real')"


def column_values(payload: dict[str, object]) -> tuple[list[object], int]:
    """The typed column values of ``payload`` (in :data:`COLUMNS` order) and ``mw_other``."""
    values: list[object] = []
    other = 0
    for key, (family, bit) in COLUMNS.items():
        value = payload.get(key)
        if _fits(family, value):
            values.append(value)
        else:
            values.append(None)
            if value is not None:
                other |= bit
    return values, other


@dataclass
class Translation:
    """A WHERE clause, its parameters, and whether it is exact (else post-filter)."""

    sql: str
    params: list[object] = field(default_factory=list)
    exact: bool = True


def translate(node: FilterNode | None) -> Translation:
    """The SQL of ``node`` (``"1"`` for no filter)."""
    out = Translation("1")
    if node is not None:
        out.sql = _node(node, False, out)
    return out


def _node(node: FilterNode, negated: bool, out: Translation) -> str:
    if isinstance(node, Not):
        return _node(node.child, not negated, out)
    if isinstance(node, (And, Or)):
        conjunction = isinstance(node, And) != negated  # De Morgan
        if not node.children:
            return "1" if isinstance(node, And) != negated else "0"
        parts = [_node(child, negated, out) for child in node.children]
        return "(" + (" AND " if conjunction else " OR ").join(parts) + ")"
    positive = _comparison(node, out)
    return f"NOT COALESCE({positive}, 0)" if negated else positive


def _comparison(node: Comparison, out: Translation) -> str:
    op, value = node.op, node.value
    if op in ("ne", "nin"):  # exact negations of eq / in
        inner = _comparison(Comparison(node.field, "eq" if op == "ne" else "in", value), out)
        return f"NOT COALESCE({inner}, 0)"
    values = value if isinstance(value, tuple) else (value,)
    if any(not _exact_value(v) for v in values):
        out.exact = False
        return "1"  # a superset; the store post-filters with the reference evaluator
    if node.field in COLUMNS:
        return _column(node, out)
    return _json(node, out)


def _column(node: Comparison, out: Translation) -> str:
    """A comparison on a typed column, falling back to the JSON for other-typed values."""
    key, op, value = node.field, node.op, node.value
    family, bit = COLUMNS[key]
    other = f"(mw_other & {bit}) != 0"
    if op == "exists":
        return f"({key} IS NOT NULL OR {other})"
    fits = (lambda v: isinstance(v, str)) if family == TEXT else _is_number
    if op in ("eq", "in"):
        values = value if isinstance(value, tuple) else (value,)
        native = [v for v in values if fits(v)]
        foreign = tuple(v for v in values if not fits(v))
        parts = []
        if native:
            out.params.extend(native)
            parts.append(f"{key} = ?" if len(native) == 1 else f"{key} IN ({_marks(native)})")
        if foreign:
            rest = Comparison(key, "in", foreign)
            parts.append(f"({other} AND {_json(rest, out)})")
        return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"
    if op in _ORDER and family == NUMBER:
        out.params.append(value)
        return f"({key} {_ORDER[op]} ? OR ({other} AND {_json(node, out)}))"
    return _json(node, out)


_ORDER = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _json(node: Comparison, out: Translation) -> str:
    """A comparison read from the payload JSON, by type family."""
    path = f"'$.{node.field}'"  # field names match [A-Za-z_][A-Za-z0-9_]*: safe to inline
    kind = f"json_type(payload, {path})"
    val = f"json_extract(payload, {path})"
    op, value = node.op, node.value
    if op == "exists":
        return f"COALESCE({kind}, 'null') != 'null'"
    if op == "in":
        assert isinstance(value, tuple)
        strings = [v for v in value if isinstance(v, str)]
        parts = []
        if strings:  # params are appended in the order their marks appear in the SQL
            out.params.extend(strings)
            parts.append(f"({kind} = 'text' AND {val} IN ({_marks(strings)}))")
        parts += [
            _json(Comparison(node.field, "eq", v), out) for v in value if not isinstance(v, str)
        ]
        return "(" + " OR ".join(parts) + ")"
    if op == "eq":
        if isinstance(value, bool):
            return f"{kind} = '{'true' if value else 'false'}'"
        out.params.append(value)
        if isinstance(value, str):
            return f"({kind} = 'text' AND {val} = ?)"
        return f"({kind} IN {_NUMBER_TYPES} AND {val} = ?)"
    if op in _ORDER:
        out.params.append(value)
        return f"({kind} IN {_NUMBER_TYPES} AND {val} {_ORDER[op]} ?)"
    if op == "icontains":
        out.params.append(str(value).casefold())
        return f"({kind} = 'text' AND instr(mw_casefold({val}), ?) > 0)"
    if op == "contains":
        each = f"SELECT 1 FROM json_each(payload, {path}) AS e WHERE "
        if isinstance(value, bool):
            return f"({kind} = 'array' AND EXISTS ({each}e.type = '{str(value).lower()}'))"
        if isinstance(value, str):  # a substring of a string, or an element of a list
            out.params += [value, value]
            return (
                f"(({kind} = 'text' AND instr({val}, ?) > 0) OR ({kind} = 'array' AND "
                f"EXISTS ({each}e.type = 'text' AND e.value = ?)))"
            )
        out.params.append(value)
        return f"({kind} = 'array' AND EXISTS ({each}e.type IN {_NUMBER_TYPES} AND e.value = ?))"
    raise AssertionError(f"unhandled operator {op!r}")  # the parser admits no other


def _exact_value(value: Scalar) -> bool:
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return abs(value) < _INT64
    return abs(value) < _EXACT_FLOAT


def _fits(family: str, value: object) -> bool:
    """Whether ``value`` goes into a typed column of ``family`` exactly."""
    if family == TEXT:
        return isinstance(value, str) and "\x00" not in value
    return _is_number(value) and abs(value) < _INT64  # type: ignore[arg-type]  # a number when _is_number says so


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))
