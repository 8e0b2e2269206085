"""Fixtures of the export/import tests: real stores (the core's ``memory`` store and, when
the plugin is installed, Qdrant Edge), the SQLite history, and the hashing embedder."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memoweave.memory import Memory
from memoweave.plugins import load_registry
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder

MakeMemory = Callable[..., Memory]


@pytest.fixture
def make_memory(tmp_path: Path, memory_factory: Any) -> MakeMemory:
    """``make(store="memory"|"qdrant", embedder=None)``: a Memory on a fresh store and
    history under ``tmp_path`` (the root conftest's ``memory_factory``)."""

    def make(store: str = "memory", embedder: Any = None) -> Memory:
        where = tmp_path / f"m{len(memory_factory.built)}"
        if store == "qdrant":
            if "qdrant" not in load_registry().names("vector_store"):
                pytest.skip("memoweave-qdrant is not installed")
            instance = load_registry().create(
                "vector_store", "qdrant", {"mode": "edge", "path": str(where / "edge")}
            )
        else:
            instance = InMemoryVectorStore()
        return memory_factory(  # type: ignore[no-any-return]
            {"history_db_path": str(where / "history.db")},
            embedder=embedder or HashingEmbedder(dims=64),
            vector_store=instance,
        )

    return make


def sample_lines(count: int = 4) -> list[dict[str, Any]]:
    """Memory lines exercising every field: scopes, metadata, supersession, deletion,
    expiry, provenance, history; ``count`` >= 4 adds plain active memories."""
    ids = [str(uuid.UUID(int=i + 1)) for i in range(count)]
    event = {"event": "ADD", "created_at": "2024-05-01T10:00:00+00:00", "old_memory": None}
    lines: list[dict[str, Any]] = [
        {
            "id": ids[0],
            "memory": "Lives in Lisbon",
            "user_id": "maya",
            "status": "superseded",
            "superseded_by": ids[1],
            "valid_until": "2024-06-01T09:00:00+00:00",
            "created_at": "2024-05-01T10:00:00+00:00",
            "updated_at": "2024-06-01T09:00:00+00:00",
            "observed_at": "2024-04-30T18:00:00+00:00",
            "source_message_ids": ["m1"],
            "metadata": {"topic": "home", "priority": 2},
            "history": [
                {**event, "id": f"{ids[0]}-e1", "new_memory": "Lives in Lisbon"},
                {
                    "id": f"{ids[0]}-e2",
                    "event": "SUPERSEDE",
                    "created_at": "2024-06-01T09:00:00+00:00",
                    "old_memory": "Lives in Lisbon",
                    "new_memory": "Moved to Berlin",
                    "superseded_by": ids[1],
                },
            ],
        },
        {
            "id": ids[1],
            "memory": "Moved to Berlin in June 2024",
            "user_id": "maya",
            "actor_id": "Maya",
            "role": "user",
            "supersedes": [ids[0]],
            "created_at": "2024-06-01T09:00:00+00:00",
            "metadata": {"topic": "home"},
            "history": [{**event, "id": f"{ids[1]}-e1", "new_memory": "Moved to Berlin"}],
        },
        {
            "id": ids[2],
            "memory": "Prefers short answers | terse=yes / no=emoji",
            "agent_id": "support/bot",
            "run_id": "r=1",
            "created_at": "2024-05-02T10:00:00+00:00",
            "expiration_date": "2030-01-01",
            "memory_type": "procedural_memory",
            "metadata": {},
            "history": [],
        },
        {
            "id": ids[3],
            "memory": "Had a cat named Tofu",
            "user_id": "maya",
            "status": "deleted",
            "created_at": "2024-05-03T10:00:00+00:00",
            "metadata": {"nested": {"a": [1, 2]}},
            "history": [{**event, "id": f"{ids[3]}-e1", "new_memory": "Had a cat named Tofu"}],
        },
    ]
    for i in range(4, count):
        lines.append(
            {
                "id": ids[i],
                "memory": f"Fact number {i} about user {i % 7}",
                "user_id": f"user-{i % 7}",
                "created_at": "2024-05-04T10:00:00+00:00",
                "history": [{**event, "id": f"{ids[i]}-e1", "new_memory": f"Fact number {i}"}],
            }
        )
    return lines


def write_export(path: Path, lines: list[Any], *, raw: list[str] | None = None) -> Path:
    """A memoweave export file: the header, ``lines`` as JSON, then ``raw`` text lines."""
    header = {"format": "memoweave-export", "version": 1, "count": len(lines)}
    text = [json.dumps(header)] + [json.dumps(line) for line in lines] + (raw or [])
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path
