"""Input validation and the payload/vector encoding the store writes to Qdrant.

Stored payload = the caller's payload, untouched, plus at most two bookkeeping keys with
the reserved prefix ``_mw_`` (stripped again on every read):

- :data:`memoweave_qdrant.filters.LISTS_KEY`: names of the list-valued keys, so filters can
  tell a string from a list of strings (see :mod:`memoweave_qdrant.filters`);
- :data:`NORM_KEY` (cosine collections only): the vector's L2 norm. Qdrant normalises
  cosine vectors on write; multiplying by the norm gives the caller's vector back.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from memoweave.errors import ValidationError
from memoweave_qdrant.filters import LISTS_KEY

RESERVED_PREFIX = "_mw_"
NORM_KEY = "_mw_norm"
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_COLLECTION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}\Z")


def check_collection_name(name: object) -> str:
    """A collection name: 1-128 of ``[A-Za-z0-9_-]``, starting alphanumeric."""
    if not isinstance(name, str) or not _COLLECTION.match(name):
        raise ValidationError(
            f"invalid collection name {name!r}",
            hint="Use 1-128 letters, digits, '_' or '-', starting with a letter or digit.",
        )
    return name


def check_positive(name: str, value: object) -> int:
    """A positive ``int`` (not ``bool``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{name} must be a positive integer, got {value!r}")
    return value


def parse_id(value: object) -> uuid.UUID:
    """A canonical lowercase UUID string, as the contract requires, as a ``UUID``."""
    if isinstance(value, str):
        try:
            parsed = uuid.UUID(value)
        except ValueError:
            parsed = None
        if parsed is not None and str(parsed) == value:
            return parsed
    raise ValidationError(
        f"record id must be a canonical lowercase UUID string, got {value!r}",
        hint="Use str(uuid.uuid4()) for new record ids.",
    )


def check_vector(vector: object, dims: int) -> tuple[list[float], float]:
    """``vector`` as a list of ``dims`` finite floats, and its L2 norm."""
    if isinstance(vector, str | bytes | Mapping):
        raise ValidationError("vector must be a sequence of floats")
    try:
        values = list(map(float, vector))  # type: ignore[call-overload]
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"vector must be a sequence of floats: {exc}") from None
    if len(values) != dims:
        raise ValidationError(
            f"vector has {len(values)} dimensions, the collection has {dims}",
            hint="Use the same embedder (and dims) the collection was created with.",
        )
    norm = math.hypot(*values)  # C loop; NaN or inf in, non-finite out
    if not math.isfinite(norm):
        raise ValidationError("vector contains NaN, infinite or overflowing values")
    return values, norm


def encode_payload(payload: object, *, norm: float | None) -> dict[str, Any]:
    """The payload to store: a shallow copy plus the bookkeeping keys."""
    if not isinstance(payload, Mapping):
        raise ValidationError(f"payload must be a dict, got {type(payload).__name__}")
    stored: dict[str, Any] = {}
    lists: list[str] = []
    for key, value in payload.items():
        if not isinstance(key, str) or not _KEY.match(key):
            raise ValidationError(
                f"invalid payload key {key!r}", hint="Keys match [A-Za-z_][A-Za-z0-9_]*."
            )
        if key.startswith(RESERVED_PREFIX):
            raise ValidationError(
                f"payload key {key!r} uses the prefix {RESERVED_PREFIX!r} reserved by the "
                "Qdrant store",
                hint="Rename the key.",
            )
        if isinstance(value, list | tuple):
            lists.append(key)
            value = list(value)
        stored[key] = value
    if lists:
        stored[LISTS_KEY] = sorted(lists)
    if norm is not None:
        stored[NORM_KEY] = norm
    return stored


def decode_payload(stored: Mapping[str, Any]) -> dict[str, Any]:
    """The caller's payload: ``stored`` without the bookkeeping keys."""
    return {k: v for k, v in stored.items() if not k.startswith(RESERVED_PREFIX)}


def decode_vector(vector: Sequence[float] | None, stored: Mapping[str, Any]) -> list[float] | None:
    """The caller's vector: the stored one, rescaled to :data:`NORM_KEY` if present."""
    if vector is None:
        return None
    norm = stored.get(NORM_KEY)
    if norm is None:
        return list(vector)
    # Engines hand back the unit vector, except qdrant-client local mode after a reopen,
    # which returns the raw one: rescale whatever came back to the recorded norm.
    current = math.hypot(*vector)
    scale = norm / current if current else 0.0
    return [x * scale for x in vector]
