"""The order ``Memory()`` builds the embedded default stack in: the default embedder (a
model load) starts before the store is created, so its onnxruntime session builds while
the store opens; a failure on either side leaves nothing open. Real plugins (Qdrant
Edge, onnx) under a temporary home."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from memoweave import Memory
from memoweave.errors import ProviderNotFound, VectorStoreError
from memoweave.plugins import load_registry
from memoweave.plugins.registry import ProviderRegistry


class _Recording(ProviderRegistry):
    """The installed providers (but ``without``), recording what ``create`` makes; the
    store's creation waits up to ``wait`` seconds for the embedder's to have started."""

    def __init__(self, *, without: tuple[str, str] | None = None, wait: float = 30) -> None:
        super().__init__(
            info for info in load_registry().list() if (info.kind, info.name) != without
        )
        self.made: dict[str, Any] = {}
        self.wait = wait
        self.embedder_started = threading.Event()
        self.store_saw_embedder_started: bool | None = None
        self.store_error: Exception | None = None

    def create(self, kind: str, name: str, config: Any = None) -> Any:
        if kind == "embedder":
            self.embedder_started.set()
        if kind == "vector_store":
            self.store_saw_embedder_started = self.embedder_started.wait(self.wait)
            if self.store_error is not None:
                raise self.store_error
        made = super().create(kind, name, config)
        self.made[kind] = made
        return made


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMOWEAVE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _default_stack_installed() -> bool:
    registry = load_registry()
    return "qdrant" in registry.names("vector_store") and "onnx" in registry.names("embedder")


pytestmark = pytest.mark.skipif(
    not _default_stack_installed(), reason="the default stack (qdrant, onnx) is not installed"
)


def test_the_default_embedder_starts_before_the_store_is_created(home: Path) -> None:
    registry = _Recording()
    memory = Memory(registry=registry)
    try:
        assert registry.store_saw_embedder_started is True
        memory.add("Maya plays the cello", user_id="maya", infer=False)
        found = memory.search("What does Maya play?", user_id="maya")["results"]
        assert found[0]["memory"] == "Maya plays the cello"
    finally:
        memory.close()


def test_a_store_that_fails_leaves_the_started_embedder_closed(home: Path) -> None:
    registry = _Recording()
    registry.store_error = VectorStoreError("the store refuses to open", hint="a test")
    with pytest.raises(VectorStoreError, match="refuses to open"):
        Memory(registry=registry)
    embedder = registry.made["embedder"]
    with pytest.raises(Exception, match="closed"):
        embedder.embed(["hello"])


def test_a_missing_default_embedder_names_the_stack_install(home: Path) -> None:
    registry = _Recording(without=("embedder", "onnx"))
    with pytest.raises(ProviderNotFound) as info:
        Memory(registry=registry)
    assert "memoweave[embedded]" in info.value.hint
    assert registry.made["vector_store"]._closed  # made meanwhile, closed on the way out


def test_the_writer_is_made_once_by_the_first_writes(home: Path) -> None:
    """A Memory that only searches never makes its writer (the write path is imported by
    the first write); eight threads writing first at once all go through one writer."""
    memory = Memory()
    try:
        memory.search("anything", user_id="maya")
        assert memory._ops._writer is None
        barrier, seen = threading.Barrier(8), []

        def first_write(i: int) -> None:
            barrier.wait(10)
            memory.add(f"Maya owns {i} cellos", user_id="maya", infer=False)
            seen.append(memory._ops.writer)

        threads = [threading.Thread(target=first_write, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert len(seen) == 8 and all(writer is seen[0] for writer in seen)
        assert len(memory.get_all(user_id="maya")["results"]) == 8
    finally:
        memory.close()
