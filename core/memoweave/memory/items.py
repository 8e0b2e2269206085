"""The mem0-shaped items returned to callers: ``id``, ``memory``, ``hash``, ``metadata``,
``score``, ``created_at``, ``updated_at``, scope keys, ``actor_id``, ``role``, plus
memoweave's provenance and lifecycle fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memoweave.memory.payload import metadata_of
from memoweave.retrieval.candidates import Candidate
from memoweave.retrieval.profiles import MEMORY_KIND_KEY

_OUTPUT_KEYS = (
    "user_id", "agent_id", "run_id", "actor_id", "role", "memory_type", MEMORY_KIND_KEY,
    "source_message_ids",
    "observed_at", "valid_until", "superseded_by", "supersedes", "expiration_date",
)  # fmt: skip


def to_item(
    memory_id: str, payload: Mapping[str, Any], score: float | None = None
) -> dict[str, Any]:
    """The mem0-shaped dict for one stored memory."""
    item: dict[str, Any] = {
        "id": memory_id,
        "memory": payload.get("memory", ""),
        "hash": payload.get("hash"),
        "metadata": metadata_of(payload),
        "created_at": payload.get("created_at"),
        "updated_at": payload.get("updated_at"),
    }
    if score is not None:
        item["score"] = score
    for key in _OUTPUT_KEYS:
        if payload.get(key) is not None:
            item[key] = payload[key]
    return item


def result_item(candidate: Candidate, *, explain: bool) -> dict[str, Any]:
    """The mem0-shaped item of one ranked candidate, with ``explain`` when asked."""
    item = to_item(candidate.id, candidate.payload, score=candidate.score)
    if explain:
        item["explain"] = candidate.explanation()
    return item
