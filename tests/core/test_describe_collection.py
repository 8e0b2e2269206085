"""``VectorStore.describe_collection``: dims and metric of an existing collection, ``None``
for a missing one, never created; a bound store stays bound (memory, Qdrant Edge and local,
Upstash emulator)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memoweave.plugins import load_registry
from memoweave.providers.vector_store import VectorRecord

_ID = "00000000-0000-0000-0000-000000000001"


@pytest.fixture(params=["memory", "qdrant-edge", "qdrant-local", "upstash"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    kind = request.param
    registry = load_registry()
    if kind.split("-")[0] not in registry.names("vector_store"):
        pytest.skip(f"{kind} is not installed")
    if kind == "upstash":
        from memoweave_upstash.emulator import UpstashEmulator

        with UpstashEmulator(dims=4) as emu:
            made = registry.create("vector_store", "upstash", {"url": emu.url, "token": emu.token})
            yield made
            made.close()
        return
    config: dict[str, Any] = {"path": str(tmp_path / "s")}
    if kind.startswith("qdrant"):
        config["mode"] = kind.split("-")[1]
    made = registry.create("vector_store", kind.split("-")[0], config)
    yield made
    made.close()


def test_describe_collection(store: Any) -> None:
    assert store.describe_collection("absent") is None
    store.ensure_collection("absent2", 4)
    store.upsert([VectorRecord(_ID, [1.0, 0.0, 0.0, 0.0], {"memory": "a"})])
    assert store.describe_collection("absent2") == (4, "cosine")
    assert store.describe_collection("absent") is None  # still not created
    assert [r.id for r in store.get([_ID])] == [_ID]  # still bound to its collection
