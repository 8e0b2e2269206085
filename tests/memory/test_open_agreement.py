"""Silent empty opens are refused, interrupted resets finished, and ``doctor --repair``
rebuilds what one side lost (issue 9, items 3 and 5)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from memoweave import ConsistencyError, VectorStoreError
from memoweave.memory import Memory
from memoweave.memory.consistency import RESET_MARKER
from memoweave.memory.doctor import run_doctor
from memoweave.memory.history import HistoryStore
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder


def _config(tmp_path: Path, store: str = "memory") -> dict[str, Any]:
    path = {"memory": {"path": str(tmp_path / "store")}, "qdrant": {"path": str(tmp_path / "edge")}}
    return {
        "vector_store": {"provider": store, "config": path[store]},
        "history_db_path": str(tmp_path / "history.db"),
    }


def _open(config: dict[str, Any]) -> Memory:
    return Memory(config, embedder=HashingEmbedder(dims=16))


def _fill(config: dict[str, Any]) -> list[str]:
    with _open(config) as mem:
        ids = [
            mem.add(text, user_id="alice", infer=False, metadata={"n": i})["results"][0]["id"]
            for i, text in enumerate(["I like tea", "I live in Berlin", "My dog is Rex"])
        ]
        mem.update(ids[0], "I like green tea")
        mem.delete(ids[2])
    return ids


def _statuses(findings: list[Any]) -> dict[str, str]:
    return {f.name: f.status for f in findings}


def test_a_deleted_store_is_refused_then_reembedded_by_repair(tmp_path: Path) -> None:
    config = _config(tmp_path)
    ids = _fill(config)
    shutil.rmtree(tmp_path / "store")
    with _open(config) as mem, pytest.raises(ConsistencyError) as err:
        mem.get_all(user_id="alice")
    assert "doctor --repair" in err.value.hint
    history = HistoryStore(tmp_path / "history.db")
    assert history.live_memory_ids() == set(ids[:2])  # untouched
    history.close()
    found = run_doctor(config, embedder=HashingEmbedder(dims=16))
    assert _statuses(found)["store and history"] == "fail"
    fixed = run_doctor(config, repair=True, embedder=HashingEmbedder(dims=16))
    assert _statuses(fixed)["store and history"] == "fixed"
    with _open(config) as mem:
        items = {i["id"]: i for i in mem.get_all(user_id="alice")["results"]}
        assert {k: v["memory"] for k, v in items.items()} == {
            ids[0]: "I like green tea",
            ids[1]: "I live in Berlin",
        }
        assert mem.search("green tea", user_id="alice")["results"][0]["id"] == ids[0]
    assert set(_statuses(run_doctor(config, embedder=HashingEmbedder(dims=16))).values()) == {"ok"}


@pytest.mark.parametrize("damage", ["delete", "truncate"])
def test_a_lost_history_is_refused_then_rebuilt_from_the_store(tmp_path: Path, damage: str) -> None:
    config = _config(tmp_path)
    ids = _fill(config)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{tmp_path / 'history.db'}{suffix}").unlink(missing_ok=True)
    if damage == "truncate":
        (tmp_path / "history.db").write_bytes(b"")
    with _open(config) as mem, pytest.raises(ConsistencyError, match="is new") as err:
        mem.get_all(user_id="alice")
    assert err.value.details["stored"] == 2 and "holds 2 memories" in str(err.value)
    run_doctor(config, repair=True, embedder=HashingEmbedder(dims=16))
    with _open(config) as mem:
        assert {i["id"] for i in mem.get_all(user_id="alice")["results"]} == set(ids[:2])
        assert [e["event"] for e in mem.history(ids[1])] == ["ADD"]
        assert mem.get(ids[1])["metadata"] == {"n": 1}  # the store kept the metadata
        assert mem.search("Berlin", user_id="alice")["results"][0]["id"] == ids[1]


def test_an_agreeing_open_reads_one_record_of_the_store_and_counts_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether the store holds memories is all the check needs: an exact count of the
    collection (~36 ms at 100k memories, ~0.4 s at 1M) is read only for the message of a
    new history beside a filled store."""
    config = _config(tmp_path)
    ids = _fill(config)
    counted: list[object] = []
    count = InMemoryVectorStore.count

    def counting(self: InMemoryVectorStore, **kwargs: Any) -> int:
        counted.append(kwargs)
        return count(self, **kwargs)

    monkeypatch.setattr(InMemoryVectorStore, "count", counting)
    with _open(config) as mem:
        assert mem.search("Berlin", user_id="alice")["results"][0]["id"] == ids[1]
    assert counted == []


def test_collections_sharing_a_history_open_without_false_alarms(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _fill(config)
    other = {**config, "collection_name": "second"}
    with _open(other) as mem:
        assert mem.get_all(user_id="alice")["results"] == []
        mem.add("I sing", user_id="bob", infer=False)


def test_an_interrupted_reset_is_finished_on_open(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _fill(config)
    history = HistoryStore(tmp_path / "history.db")
    history.set_meta(RESET_MARKER, "2024-01-01T00:00:00+00:00")  # as if killed mid-reset
    history.close()
    with _open(config) as mem:
        assert mem.get_all(user_id="alice")["results"] == []
        assert mem.search("tea", user_id="alice")["results"] == []
        mem.add("fresh start", user_id="alice", infer=False)
    again = HistoryStore(tmp_path / "history.db")
    assert again.meta(RESET_MARKER) is None and len(again.live_memory_ids()) == 1
    again.close()


def test_doctor_rebuilds_a_lost_qdrant_edge_metadata_file(tmp_path: Path) -> None:
    config = _config(tmp_path, "qdrant")
    ids = _fill(config)
    (tmp_path / "edge" / "memoweave" / "memoweave.json").unlink()
    with _open(config) as mem, pytest.raises(VectorStoreError, match="nothing was deleted"):
        mem.get_all(user_id="alice")
    found = _statuses(run_doctor(config, embedder=HashingEmbedder(dims=16)))
    assert found["collection"] == "fail" and found["store and history"] == "skipped"
    fixed = _statuses(run_doctor(config, repair=True, embedder=HashingEmbedder(dims=16)))
    assert fixed["collection"] == "fixed" and fixed["store and history"] == "ok"
    with _open(config) as mem:
        assert {i["id"] for i in mem.get_all(user_id="alice")["results"]} == set(ids[:2])
