"""The keyword postings and entity links kept in memory per scope never serve a state
older than the last commit: writes of this Memory, failed writes and writes of another
connection to the same history file are all seen by the next search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memoweave.errors import VectorStoreError
from memoweave.index import keyword_postings
from memoweave.memory import Memory
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder

from .conftest import BuildMemory, add_texts
from .test_index_consistency import FlakyStore

pytestmark = pytest.mark.usefixtures("cached_small_scopes")

TEXTS = [
    "Caroline paints in Lisbon",
    "Caroline swims in the sea near Lisbon",
    "Melanie bakes bread with Caroline",
]


class SharedStore(InMemoryVectorStore):
    """An in-memory store two Memory objects can share: closing one keeps it open."""

    def close(self) -> None:
        pass


def signals(memory: Memory, query: str) -> dict[str, dict[str, Any]]:
    """Each hit's keyword and entity scores (raw), by memory text."""
    hits = memory.search(query, user_id="alice", explain=True)["results"]
    return {
        h["memory"]: {
            k: h["explain"][k]["score"] for k in ("keyword", "entity") if k in h["explain"]
        }
        for h in hits
    }


def cold_signals(history: str, store: SharedStore, query: str) -> dict[str, Any]:
    """The same search from a new Memory on the same files (nothing cached yet)."""
    cold = Memory(
        {"history_db_path": history}, embedder=HashingEmbedder(dims=64), vector_store=store
    )
    try:
        return signals(cold, query)
    finally:
        cold.close()


def test_searches_follow_every_write(tmp_path: Path) -> None:
    history = str(tmp_path / "history.db")
    store = SharedStore()
    memory = Memory(
        {"history_db_path": history}, embedder=HashingEmbedder(dims=64), vector_store=store
    )
    ids = add_texts(memory, TEXTS)
    query = "Caroline in Lisbon"
    warm = signals(memory, query)
    assert warm == cold_signals(history, store, query)
    (new,) = add_texts(memory, ["Caroline moved to Lisbon last year"])
    after_add = signals(memory, query)
    assert "Caroline moved to Lisbon last year" in after_add
    assert after_add == cold_signals(history, store, query)
    memory.update(new, text="Caroline moved to Porto")
    after_update = signals(memory, query)
    assert "Caroline moved to Lisbon last year" not in after_update
    assert "Caroline moved to Porto" in after_update
    assert after_update == cold_signals(history, store, query)
    memory.delete(ids[0])
    after_delete = signals(memory, query)
    assert "Caroline paints in Lisbon" not in after_delete
    assert after_delete == cold_signals(history, store, query)
    memory.close()


def test_a_failed_write_leaves_searches_as_they_were(build_memory: BuildMemory) -> None:
    store = FlakyStore()
    memory = build_memory(vector_store=store)
    add_texts(memory, TEXTS)
    before = signals(memory, "Caroline Porto")
    store.fail_on = "upsert"
    with pytest.raises(VectorStoreError):
        add_texts(memory, ["Caroline paints in Porto"])
    assert signals(memory, "Caroline Porto") == before


def test_writes_of_another_connection_are_seen(tmp_path: Path) -> None:
    history = str(tmp_path / "history.db")
    store = SharedStore()
    reader = Memory(
        {"history_db_path": history}, embedder=HashingEmbedder(dims=64), vector_store=store
    )
    writer = Memory(
        {"history_db_path": history}, embedder=HashingEmbedder(dims=64), vector_store=store
    )
    try:
        add_texts(writer, TEXTS)
        assert "Melanie visits Porto" not in signals(reader, "Melanie Porto")
        add_texts(writer, ["Melanie visits Porto"])
        found = signals(reader, "Melanie Porto")
        assert found["Melanie visits Porto"]["keyword"] > 0
        assert found["Melanie visits Porto"]["entity"] > 0
    finally:
        writer.close()
        reader.close()


def test_scopes_too_large_to_cache_score_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = str(tmp_path / "history.db")
    store = SharedStore()
    memory = Memory(
        {"history_db_path": history}, embedder=HashingEmbedder(dims=64), vector_store=store
    )
    add_texts(memory, [*TEXTS, "Lisbon trams are yellow", "Melanie and Caroline met in 2019"])
    query = "Caroline Lisbon 2019"
    cached = signals(memory, query)
    memory.close()
    monkeypatch.setattr(keyword_postings, "CACHE_MAX_DOCS", 1)
    uncached = cold_signals(history, store, query)  # a new Memory: ranked inside SQLite
    assert uncached.keys() == cached.keys()
    for text, scores in cached.items():
        assert uncached[text] == pytest.approx(scores)
