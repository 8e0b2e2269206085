"""Shared fixtures of the qdrant plugin tests (names prefixed ``qdrant_`` to stay unique)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memoweave.plugins import load_registry
from memoweave.providers.vector_store import VectorStore

StoreMaker = Callable[[dict[str, Any]], VectorStore]


@pytest.fixture
def qdrant_make_store() -> Iterator[StoreMaker]:
    """Build ``qdrant`` stores through the registry; every one is closed after the test."""
    made: list[VectorStore] = []

    def make(config: dict[str, Any]) -> VectorStore:
        store = load_registry().create("vector_store", "qdrant", config)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture(params=["edge", "local"])
def qdrant_config(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """A fresh on-disk configuration of each embedded mode."""
    return {"mode": request.param, "path": str(tmp_path / request.param)}
