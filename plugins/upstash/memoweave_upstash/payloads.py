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

import math
from collections.abc import Mapping
from typing import Any

from memoweave.providers.vector_store import Metric, Payload

NULLS_KEY = "memoweave:nulls"
SIMILARITY_FUNCTIONS: dict[Metric, str] = {
    "cosine": "COSINE",
    "dot": "DOT_PRODUCT",
    "euclidean": "EUCLIDEAN",
}


def encode_payload(payload: Payload) -> dict[str, Any]:
    """Upstash metadata for a payload checked by :mod:`memoweave.providers.store_checks`
    (a new dict; ``payload`` is not modified)."""
    metadata = {key: value for key, value in payload.items() if value is not None}
    nulls = [key for key, value in payload.items() if value is None]
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
    "decode_metadata",
    "encode_payload",
    "similarity",
]
