"""Fixtures for the Memory API tests: the real core (in-memory store, SQLite history)
with the test doubles standing in for the model providers only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memoweave.memory import Memory
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder, ScriptedLLM

MakeMemory = Callable[..., Memory]


@pytest.fixture
def make_memory(tmp_path: Path) -> Iterator[MakeMemory]:
    """Build a Memory on a fresh in-memory store and history file; closes them after."""
    built: list[Memory] = []

    def make(config: dict[str, Any] | None = None, **overrides: Any) -> Memory:
        overrides.setdefault("embedder", HashingEmbedder(dims=64))
        overrides.setdefault("vector_store", InMemoryVectorStore())
        cfg = {"history_db_path": str(tmp_path / f"history{len(built)}.db"), **(config or {})}
        memory = Memory(cfg, **overrides)
        built.append(memory)
        return memory

    yield make
    for memory in built:
        memory.close()


@pytest.fixture
def memory(make_memory: MakeMemory) -> Memory:
    """A Memory with no LLM (verbatim and offline strategies)."""
    return make_memory()


@pytest.fixture
def llm() -> ScriptedLLM:
    """A scripted LLM; tests queue its answers."""
    return ScriptedLLM()


@pytest.fixture
def llm_memory(make_memory: MakeMemory, llm: ScriptedLLM) -> Memory:
    """A Memory using the additive strategy with the scripted LLM."""
    return make_memory(llm=llm)
