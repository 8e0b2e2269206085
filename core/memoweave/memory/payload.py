"""What a memory's payload (the record the vector store keeps) holds: the lifecycle
statuses, the keys memoweave owns, the stored text and its hash, the caller's metadata
inside it, and what the side indexes keep of it.

A payload is flat: the system fields below plus the caller's metadata keys.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from memoweave.index import KeywordDoc
from memoweave.providers.vector_store import EXPIRY_KEY, STATUS_KEY
from memoweave.retrieval.neighbours import TURN_POSITION_KEY
from memoweave.retrieval.profiles import MEMORY_KIND_KEY

STATUS_ACTIVE = "active"
STATUS_SUPERSEDED = "superseded"
STATUS_DELETED = "deleted"

SYSTEM_KEYS: frozenset[str] = frozenset(
    {
        "memory", "hash", "user_id", "agent_id", "run_id", "actor_id", "role",
        "created_at", "updated_at", "created_ts", "observed_at", "observed_ts",
        "source_message_ids", "valid_until", "superseded_by", "supersedes", STATUS_KEY,
        "expiration_date", EXPIRY_KEY, "memory_type", MEMORY_KIND_KEY, TURN_POSITION_KEY,
        "id", "score", "metadata",
    }
)  # fmt: skip
"""Payload keys memoweave owns; metadata may not use them."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def memory_text(text: str) -> str:
    """A memory text as stored: control characters (C0, DEL, C1: NUL, terminal escapes)
    replaced by spaces, whitespace collapsed to single spaces. Message contents are kept
    as given; displays escape control characters themselves."""
    return " ".join(_CONTROL.sub(" ", text).split())


def text_hash(text: str) -> str:
    """mem0's content hash: md5 of the memory text."""
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def metadata_of(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The caller's metadata inside a stored payload."""
    return {k: v for k, v in payload.items() if k not in SYSTEM_KEYS}


def index_doc(memory_id: str, payload: Mapping[str, Any]) -> KeywordDoc:
    """What the keyword and entity indexes keep of one stored payload."""
    return KeywordDoc(
        memory_id,
        payload.get("memory", "") or "",
        payload.get("user_id"),
        payload.get("agent_id"),
        payload.get("run_id"),
        payload.get(STATUS_KEY, STATUS_ACTIVE),
    )
