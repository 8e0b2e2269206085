"""Fixtures for the retrieval tests: the real core (in-memory store, SQLite history, the
core's keyword and entity indexes) with test doubles standing in for the models only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memoweave.index import keyword_postings
from memoweave.memory import Memory

BuildMemory = Callable[..., Memory]


@pytest.fixture
def build_memory(memory_factory: Any) -> BuildMemory:
    """``build_memory(retrieval=None, **overrides)``: a Memory from the root conftest's
    ``memory_factory``; ``retrieval=`` takes overrides of the ``retrieval`` config section."""

    def build(retrieval: dict[str, Any] | None = None, **overrides: Any) -> Memory:
        return memory_factory({"retrieval": retrieval} if retrieval else None, **overrides)  # type: ignore[no-any-return]

    return build


@pytest.fixture
def cached_small_scopes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scopes of any size go through the indexes' per-scope caches (small ones are
    otherwise scored from their rows at every search, never cached)."""
    monkeypatch.setattr(keyword_postings, "SCANNED_MAX_DOCS", 0)


def add_texts(memory: Memory, texts: list[str], user_id: str = "alice", **kwargs: Any) -> list[str]:
    """Store each text verbatim as one memory; return their ids in order."""
    ids = []
    for text in texts:
        out = memory.add(text, user_id=user_id, infer=False, **kwargs)
        ids.append(out["results"][0]["id"])
    return ids
