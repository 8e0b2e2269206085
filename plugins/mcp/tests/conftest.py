"""Fixtures of the MCP tests: the real tools over the core's store, a SQLite history and
the real ONNX embedder; the SDK's in-memory client connects to them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from memoweave_server.service import MemoryService

from memoweave.plugins import load_registry
from memoweave.providers.embedder import Embedder, Purpose
from memoweave.stores.memory import InMemoryVectorStore

MakeService = Callable[..., MemoryService]


class SharedEmbedder(Embedder):
    """The session's real ONNX embedder lent to each test's Memory (``close`` no-op)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    @property
    def dims(self) -> int | None:
        return self._inner.dims

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        return self._inner.embed(texts, purpose=purpose)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def onnx_embedder() -> Iterator[Embedder]:
    registry = load_registry()
    if "onnx" not in registry.names("embedder"):
        pytest.skip("the onnx embedder plugin (memoweave-onnx) is not installed")
    inner = registry.create("embedder", "onnx", {})
    yield SharedEmbedder(inner)
    inner.close()


@pytest.fixture
async def make_service(tmp_path: Path, onnx_embedder: Embedder) -> AsyncIterator[MakeService]:
    """A ``MemoryService`` on a fresh store and history (``llm=`` optional; ``config=``
    more of the memory's config), closed on the test's event loop afterwards."""
    built: list[MemoryService] = []

    def make(config: dict[str, Any] | None = None, **overrides: Any) -> MemoryService:
        config = {"history_db_path": str(tmp_path / f"history{len(built)}.db"), **(config or {})}
        overrides.setdefault("embedder", onnx_embedder)
        overrides.setdefault("vector_store", InMemoryVectorStore())
        service = MemoryService.from_config(config, **overrides)
        built.append(service)
        return service

    yield make
    for service in built:
        await service.close()
