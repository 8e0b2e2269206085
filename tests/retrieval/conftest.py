"""Fixtures for the retrieval tests: the real core (in-memory store, SQLite history, the
core's keyword and entity indexes) with test doubles standing in for the models only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memoweave.memory import Memory
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder

BuildMemory = Callable[..., Memory]


@pytest.fixture
def build_memory(tmp_path: Path) -> Iterator[BuildMemory]:
    """Build a Memory on a fresh in-memory store and history file; closes them after.
    ``retrieval=`` takes overrides of the ``retrieval`` config section."""
    built: list[Memory] = []

    def build(retrieval: dict[str, Any] | None = None, **overrides: Any) -> Memory:
        overrides.setdefault("embedder", HashingEmbedder(dims=64))
        overrides.setdefault("vector_store", InMemoryVectorStore())
        cfg: dict[str, Any] = {"history_db_path": str(tmp_path / f"history{len(built)}.db")}
        if retrieval:
            cfg["retrieval"] = retrieval
        memory = Memory(cfg, **overrides)
        built.append(memory)
        return memory

    yield build
    for memory in built:
        memory.close()


def add_texts(memory: Memory, texts: list[str], user_id: str = "alice", **kwargs: Any) -> list[str]:
    """Store each text verbatim as one memory; return their ids in order."""
    ids = []
    for text in texts:
        out = memory.add(text, user_id=user_id, infer=False, **kwargs)
        ids.append(out["results"][0]["id"])
    return ids
