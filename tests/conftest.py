"""The one helper every core test builds a Memory with: the real core (the in-memory
store, a SQLite history under ``tmp_path``) with the hashing embedder standing in for a
model; tests pass their own config sections and providers on top.

``api`` picks the API: ``"sync"`` here; ``tests/memory`` overrides it to run every test
on ``Memory`` and on ``AsyncMemory`` (driven through :class:`memoweave.testing.blocking.
Blocking`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memoweave.memory import AsyncMemory, Memory
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.blocking import Blocking
from memoweave.testing.doubles import HashingEmbedder


class MemoryFactory:
    """``factory(config=None, **overrides)``: a new Memory (or blocking AsyncMemory) on a
    fresh in-memory store and history file (``embedder``, ``vector_store`` and the config's
    keys override the defaults); :meth:`close` closes every one built."""

    def __init__(self, tmp_path: Path, api: str = "sync") -> None:
        self.tmp_path = tmp_path
        self.api = api
        self.built: list[Any] = []

    def __call__(self, config: dict[str, Any] | None = None, **overrides: Any) -> Memory:
        overrides.setdefault("embedder", HashingEmbedder(dims=64))
        overrides.setdefault("vector_store", InMemoryVectorStore())
        history = str(self.tmp_path / f"history{len(self.built)}.db")
        cfg = {"history_db_path": history, **(config or {})}
        memory: Any = (
            Memory(cfg, **overrides)
            if self.api == "sync"
            else Blocking(AsyncMemory(cfg, max_workers=4, **overrides))
        )
        self.built.append(memory)
        return memory  # type: ignore[no-any-return]  # a Blocking view stands in for Memory

    def close(self) -> None:
        for memory in self.built:
            memory.close()
            if isinstance(memory, Blocking):
                memory.close_loop()


@pytest.fixture
def api() -> str:
    """Which API ``memory_factory`` builds (overridden where both are run)."""
    return "sync"


@pytest.fixture
def memory_factory(tmp_path: Path, api: str) -> Iterator[MemoryFactory]:
    """A :class:`MemoryFactory` under ``tmp_path``; everything it built is closed after."""
    factory = MemoryFactory(tmp_path, api)
    yield factory
    factory.close()
