"""Fixtures for the Memory API tests: the real core (in-memory store, SQLite history)
with the test doubles standing in for the model providers only.

``make_memory`` (and so ``memory`` and ``llm_memory``) runs every test twice: on
``Memory`` and on ``AsyncMemory`` driven through :class:`memoweave.testing.blocking.
Blocking`, so both APIs are held to the same arguments, results and errors."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memoweave.memory import AsyncMemory, Memory
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.blocking import Blocking
from memoweave.testing.doubles import HashingEmbedder, ScriptedLLM

MakeMemory = Callable[..., Memory]


@pytest.fixture(params=["sync", "async"])
def api(request: pytest.FixtureRequest) -> str:
    """Which API the test runs on."""
    return str(request.param)


@pytest.fixture
def make_memory(tmp_path: Path, api: str) -> Iterator[MakeMemory]:
    """Build a Memory (or a blocking AsyncMemory) on a fresh in-memory store and history
    file; closes them after."""
    built: list[Any] = []

    def make(config: dict[str, Any] | None = None, **overrides: Any) -> Memory:
        overrides.setdefault("embedder", HashingEmbedder(dims=64))
        overrides.setdefault("vector_store", InMemoryVectorStore())
        cfg = {"history_db_path": str(tmp_path / f"history{len(built)}.db"), **(config or {})}
        memory: Any = (
            Memory(cfg, **overrides)
            if api == "sync"
            else Blocking(AsyncMemory(cfg, max_workers=4, **overrides))
        )
        built.append(memory)
        return memory  # type: ignore[no-any-return]

    yield make
    for memory in built:
        memory.close()
        if isinstance(memory, Blocking):
            memory.close_loop()


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
