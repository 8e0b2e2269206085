"""Mapping between memoweave records and Upstash vectors: payloads, ids and scores.

Payloads are stored as Upstash metadata. Top-level ``None`` values are not written as JSON
``null``: their keys are listed under :data:`NULLS_KEY` and restored on read, so a missing
key and a ``None`` value are the same thing to Upstash's filter (``HAS FIELD`` is exactly
memoweave's "present and not ``None``"). ``NULLS_KEY`` cannot collide with a payload key
(payload keys match ``[A-Za-z_][A-Za-z0-9_]*``).

Upstash returns a normalised score in [0, 1]; :func:`similarity` converts it back to the
contract's similarity:

========== =============================== ==========================================
metric     Upstash score ``s``             memoweave score
========== =============================== ==========================================
cosine     ``(1 + cos) / 2``               ``2s - 1`` (cosine similarity, [-1, 1])
dot        ``(1 + dot) / 2``               ``2s - 1`` (the dot product)
euclidean  ``1 / (1 + d²)``                ``-sqrt(1/s - 1)`` (minus the L2 distance)
========== =============================== ==========================================
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from memoweave.errors import VectorStoreError
from memoweave.filters.parse import FIELD_RE
from memoweave.providers.vector_store import Payload

NULLS_KEY = "memoweave:nulls"
SIMILARITY_FUNCTIONS = {"cosine": "COSINE", "dot": "DOT_PRODUCT", "euclidean": "EUCLIDEAN"}


def encode_payload(payload: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Upstash metadata for ``payload`` (a new dict; ``payload`` is not modified)."""
    if not isinstance(payload, Mapping):
        raise VectorStoreError(f"{where}.payload must be a dict, got {type(payload).__name__}")
    metadata: dict[str, Any] = {}
    nulls: list[str] = []
    for key, value in payload.items():
        if not isinstance(key, str) or not FIELD_RE.match(key):
            raise VectorStoreError(
                f"{where}.payload key {key!r} must match [A-Za-z_][A-Za-z0-9_]*",
                hint="Rename the payload key.",
            )
        if value is None:
            nulls.append(key)
        else:
            metadata[key] = value
    try:  # a deep copy that also proves the payload is plain, finite JSON
        metadata = json.loads(json.dumps(metadata, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise VectorStoreError(
            f"{where}.payload is not JSON-serialisable: {exc}",
            hint="Payload values must be str, int, finite float, bool, None, lists or dicts.",
        ) from None
    if nulls:
        metadata[NULLS_KEY] = nulls
    return metadata


def decode_metadata(metadata: Mapping[str, Any] | None) -> Payload:
    """The memoweave payload stored as ``metadata``."""
    if not metadata:
        return {}
    payload = {k: v for k, v in metadata.items() if k != NULLS_KEY}
    for key in metadata.get(NULLS_KEY) or ():
        payload[key] = None
    return payload


def check_vector(vector: Any, dims: int, where: str) -> list[float]:
    """``vector`` as a new list of ``dims`` finite floats, else ``VectorStoreError``."""
    if isinstance(vector, (str, bytes)) or not hasattr(vector, "__len__"):
        raise VectorStoreError(f"{where}: a vector must be a sequence of numbers")
    if len(vector) != dims:
        raise VectorStoreError(
            f"{where}: vector has {len(vector)} dimensions, the index has {dims}",
            hint="Use an embedder whose output size matches the Upstash index dimension.",
        )
    try:
        out = [float(x) for x in vector]
    except (TypeError, ValueError):
        raise VectorStoreError(f"{where}: a vector must contain only numbers") from None
    if not all(math.isfinite(x) for x in out) or any(isinstance(x, bool) for x in vector):
        raise VectorStoreError(f"{where}: a vector must contain only finite numbers")
    return out


def similarity(metric: str, score: float) -> float:
    """The contract's similarity for Upstash's normalised ``score`` (see module docstring)."""
    if metric == "euclidean":
        if score <= 0:
            return -math.inf
        return -math.sqrt(max(0.0, 1.0 / score - 1.0))
    return 2.0 * score - 1.0


__all__ = [
    "NULLS_KEY",
    "SIMILARITY_FUNCTIONS",
    "check_vector",
    "decode_metadata",
    "encode_payload",
    "similarity",
]
