"""The Qdrant-specific input checks (UUID ids, collection names, a reserved payload
prefix; the contract's own are :mod:`memoweave.providers.store_checks`) and the
payload/vector encoding the store writes to Qdrant.

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
from memoweave.providers import store_checks
from memoweave.providers.vector_store import Payload
from memoweave_qdrant.filters import LISTS_KEY

RESERVED_PREFIX = "_mw_"
NORM_KEY = "_mw_norm"
_COLLECTION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


def check_collection_name(name: object) -> str:
    """A collection name: 1-128 of ``[A-Za-z0-9_-]``, starting alphanumeric."""
    return store_checks.check_collection_name(
        name, _COLLECTION, "Use 1-128 letters, digits, '_' or '-', starting with a letter or digit."
    )


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


def parse_ids(ids: object) -> list[uuid.UUID]:
    """:func:`parse_id` of every id of a list checked by ``store_checks.check_ids``."""
    return [parse_id(i) for i in store_checks.check_ids(ids)]


def norm_of(vector: list[float]) -> float:
    """The L2 norm of a checked vector; ``ValidationError`` if it overflows."""
    norm = math.hypot(*vector)  # C loop
    if not math.isfinite(norm):
        raise ValidationError("the vector's norm overflows a float", hint="Scale the vector down.")
    return norm


def encode_payload(payload: Payload, *, norm: float | None) -> dict[str, Any]:
    """The payload to store (one checked by ``store_checks.check_payload``) plus the
    bookkeeping keys."""
    stored: dict[str, Any] = {}
    lists: list[str] = []
    for key, value in payload.items():
        if key.startswith(RESERVED_PREFIX):
            raise ValidationError(
                f"payload key {key!r} uses the prefix {RESERVED_PREFIX!r} reserved by the "
                "Qdrant store",
                hint="Rename the key.",
            )
        if isinstance(value, list):
            lists.append(key)
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
