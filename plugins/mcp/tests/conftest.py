"""Fixtures of the MCP tests: the real tools over the core's store, a SQLite history and
the real ONNX embedder (the kit's session fixture ``onnx_embedder``); the SDK's in-memory
client connects to them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from memoweave_server.service import MemoryService

from memoweave.providers.embedder import Embedder
from memoweave.stores.memory import InMemoryVectorStore

MakeService = Callable[..., MemoryService]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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
