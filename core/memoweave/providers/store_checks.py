"""Argument checks of the vector store contract, shared by every store so that all of them
accept and reject the same input with the same error class.

The error classes (the contract of :mod:`memoweave.providers.vector_store`):

- :class:`~memoweave.errors.ValidationError` (code ``validation_error``): an argument the
  contract does not allow, found before the engine is touched, so nothing is written:
  ``records`` not a list of :class:`VectorRecord`; an id that is not a non-empty str (a
  store may also refuse non-UUID ids); ``ids`` not a list; a vector that is not ``dims``
  finite numbers (a wrong length included); a payload that is not a dict of
  ``[A-Za-z_][A-Za-z0-9_]*`` keys to JSON values; ``dims``, ``top_k`` or ``limit`` not a
  positive int; an unknown metric; an invalid collection name; a cursor the store did not
  hand out; keyword ``text`` that is not a str.
- :class:`~memoweave.errors.VectorStoreError` (code ``vector_store_error``): the store's
  state or its engine: a method called before ``ensure_collection`` or after ``close``;
  ``ensure_collection`` of an existing collection with other dims or metric; any engine
  failure.
- :class:`~memoweave.errors.NotFound`: ``update`` of a missing id.

A batch is checked whole before its first write (:func:`check_records`), so a bad record
anywhere in it leaves the store unchanged.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping, Sequence
from typing import Any

from memoweave.errors import ValidationError, VectorStoreError
from memoweave.filters.parse import FIELD_RE
from memoweave.providers.checks import check_positive
from memoweave.providers.vector_store import EmbedText, Metric, Payload, VectorRecord

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""The integers a payload may hold: what every engine keeps exactly (signed 64-bit)."""

METRICS: tuple[Metric, ...] = ("cosine", "dot", "euclidean")
COLLECTION_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,127}")
"""Collection names every store accepts: 1-128 letters, digits, ``_`` or ``-``, not
starting with ``-``. A store may accept more (its own pattern) but never fewer."""


def invalid(message: str, hint: str | None = None, **details: Any) -> ValidationError:
    """The ``ValidationError`` of a bad store argument (to raise)."""
    return ValidationError(message, hint=hint, details=details)


def check_collection_name(
    name: Any, pattern: re.Pattern[str] = COLLECTION_NAME, rule: str | None = None
) -> str:
    """``name`` if it fully matches ``pattern`` (a store's own may be wider)."""
    if not isinstance(name, str) or not pattern.fullmatch(name):
        raise invalid(
            f"invalid collection name {name!r}",
            rule or "Use 1-128 letters, digits, '_' or '-', not starting with '-'.",
            argument="name",
        )
    return name


def check_dims(dims: Any) -> int:
    """A positive int (bool is rejected)."""
    return check_positive(dims, "dims")


def check_metric(metric: Any) -> Metric:
    """One of :data:`METRICS`."""
    if metric not in METRICS:
        raise invalid(
            f"unknown metric {metric!r}", f"Use one of {', '.join(METRICS)}.", argument="metric"
        )
    return metric  # type: ignore[no-any-return]  # narrowed by the membership test


def check_id(id: Any, where: str = "id") -> str:
    """A record id: a non-empty str."""
    if not isinstance(id, str) or not id:
        raise invalid(
            f"{where} must be a non-empty string, got {id!r}",
            "Use str(uuid.uuid4()) for record ids.",
            argument="id",
        )
    return id


def check_ids(ids: Any) -> list[str]:
    """``ids`` as a list of valid ids; a bare string is refused, not split."""
    if isinstance(ids, (str, bytes, Mapping)) or not isinstance(ids, Sequence):
        raise invalid(
            f"ids must be a list of strings, got {type(ids).__name__}",
            "Pass a list, e.g. [id] for one record.",
            argument="ids",
        )
    return [check_id(id, f"ids[{i}]") for i, id in enumerate(ids)]


def check_vector(vector: Any, dims: int, where: str = "vector") -> list[float]:
    """``vector`` as a new list of ``dims`` finite floats (bool and str items refused)."""
    if isinstance(vector, (str, bytes, Mapping)) or not hasattr(vector, "__len__"):
        raise invalid(
            f"{where} must be a sequence of numbers, got {type(vector).__name__}",
            argument="vector",
        )
    if len(vector) != dims:
        raise invalid(
            f"{where} has {len(vector)} dimensions, the collection has {dims}",
            "Use the embedder (and dims) the collection was created with.",
            argument="vector",
            expected=dims,
            got=len(vector),
        )
    for kind in set(map(type, vector)):  # per distinct type: fast on long vectors
        if kind is bool or not issubclass(kind, numbers.Real):
            raise invalid(f"{where} must contain numbers, got a {kind.__name__}", argument="vector")
    out = list(map(float, vector))
    if not all(map(math.isfinite, out)):
        raise invalid(
            f"{where} must contain finite numbers (no NaN or infinity)", argument="vector"
        )
    return out


def check_payload(payload: Any, where: str = "payload") -> Payload:
    """A validated deep copy of ``payload``: a dict of ``[A-Za-z_][A-Za-z0-9_]*`` keys to
    str, signed 64-bit int, finite float, bool, None, lists of those or nested dicts (string keys);
    tuples come back as lists."""
    if not isinstance(payload, Mapping):
        raise invalid(f"{where} must be a dict, got {type(payload).__name__}", argument="payload")
    out: Payload = {}
    for key, value in payload.items():
        if not isinstance(key, str) or not FIELD_RE.fullmatch(key):
            raise invalid(
                f"{where} key {key!r} must match [A-Za-z_][A-Za-z0-9_]*",
                "Rename the payload key.",
                argument="payload",
            )
        out[key] = _json_value(value, f"{where}.{key}")
    return out


def _json_value(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise invalid(
                f"{where} is an integer beyond 64 bits",
                "Payload integers are signed 64-bit; store larger numbers as strings.",
                argument="payload",
            )
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise invalid(
                f"{where} is {value!r}; payload numbers must be finite", argument="payload"
            )
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise invalid(f"{where}: nested dict keys must be strings", argument="payload")
        return {k: _json_value(v, f"{where}.{k}") for k, v in value.items()}
    raise invalid(
        f"{where} is a {type(value).__name__}, which is not JSON-serialisable",
        "Payload values are str, int, finite float, bool, None, lists or dicts.",
        argument="payload",
    )


def check_records(records: Any, dims: int, *, embeds_text: bool = False) -> list[VectorRecord]:
    """Validated copies of every record (vector a list of floats, payload a deep copy),
    all checked before the caller writes any. With ``embeds_text`` an :class:`EmbedText`
    with non-empty text stands in for a vector."""
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Sequence):
        raise invalid(
            f"records must be a list of VectorRecord, got {type(records).__name__}",
            argument="records",
        )
    out: list[VectorRecord] = []
    for i, rec in enumerate(records):
        where = f"records[{i}]"
        if not isinstance(rec, VectorRecord):
            raise invalid(
                f"{where} is {type(rec).__name__}, not a VectorRecord", argument="records"
            )
        vector = check_query(rec.vector, dims, f"{where}.vector", embeds_text=embeds_text)
        out.append(
            VectorRecord(
                check_id(rec.id, f"{where}.id"),
                vector,
                check_payload(rec.payload, f"{where}.payload"),
            )
        )
    return out


def check_query(
    vector: Any, dims: int, where: str = "query vector", *, embeds_text: bool = False
) -> list[float] | EmbedText:
    """A vector as :func:`check_vector`, or (``embeds_text`` only) an :class:`EmbedText`."""
    if isinstance(vector, EmbedText):
        if not embeds_text:
            raise invalid(
                f"{where}: got text to embed, but this store does not embed text",
                "Pass float vectors, or configure a store with server-side embeddings.",
                argument="vector",
            )
        if not isinstance(vector.text, str) or not vector.text.strip():
            raise invalid(f"{where}: the text to embed is empty", argument="vector")
        return vector
    return check_vector(vector, dims, where)


def check_text(text: Any) -> str:
    """Keyword search text: a str."""
    if not isinstance(text, str):
        raise invalid(f"text must be a str, got {type(text).__name__}", argument="text")
    return text


def invalid_cursor(cursor: Any) -> ValidationError:
    """The error for a ``list`` cursor the store did not hand out (to raise)."""
    return invalid(
        f"invalid cursor {cursor!r}",
        "Pass back the next_cursor of a previous page unchanged.",
        argument="cursor",
    )


def not_bound(store: str) -> VectorStoreError:
    """The error for a method called before ``ensure_collection`` (to raise)."""
    return VectorStoreError(
        f"the {store} store is not bound to a collection",
        hint="Call ensure_collection(name, dims, metric) first.",
    )


def closed(store: str) -> VectorStoreError:
    """The error for a method called after ``close`` (to raise)."""
    return VectorStoreError(f"the {store} store is closed", hint="Create a new store instance.")


__all__ = [
    "COLLECTION_NAME",
    "METRICS",
    "check_collection_name",
    "check_dims",
    "check_id",
    "check_ids",
    "check_metric",
    "check_payload",
    "check_query",
    "check_records",
    "check_text",
    "check_vector",
    "closed",
    "invalid",
    "invalid_cursor",
    "not_bound",
]
