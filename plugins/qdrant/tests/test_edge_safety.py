"""Qdrant Edge never loses or deletes data on open (issue 9, items 2 and 3): creation is
atomic and exclusive, a damaged collection is refused (not wiped) and can be repaired."""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from memoweave.errors import VectorStoreError
from memoweave.providers.vector_store import VectorRecord


def _records(n: int) -> list[VectorRecord]:
    return [
        VectorRecord(str(uuid.UUID(int=i + 1)), [1.0, float(i), 0.5, 0.25], {"user_id": "u"})
        for i in range(n)
    ]


def test_a_second_opener_of_a_fresh_folder_gets_the_lock_error(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    config = {"partitions": 1, "path": str(tmp_path / "edge")}
    stores = [qdrant_make_store(config) for _ in range(4)]
    outcomes: list[BaseException | None] = [None] * 4
    barrier = threading.Barrier(4)

    def open_one(i: int) -> None:
        barrier.wait()
        try:
            stores[i].ensure_collection("fresh", 4)
        except BaseException as exc:
            outcomes[i] = exc

    threads = [threading.Thread(target=open_one, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [i for i, out in enumerate(outcomes) if out is None]
    assert len(winners) == 1
    for out in outcomes:
        if out is not None:
            assert isinstance(out, VectorStoreError) and "locked" in str(out)
            assert "Qdrant server" in out.hint
    stores[winners[0]].upsert(_records(5))
    stores[winners[0]].close()
    again = qdrant_make_store(config)
    again.ensure_collection("fresh", 4)
    assert again.count() == 5


def test_other_collections_of_the_same_folder_stay_usable(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    config = {"partitions": 1, "path": str(tmp_path / "edge")}
    one, two = qdrant_make_store(config), qdrant_make_store(config)
    one.ensure_collection("one", 4)
    two.ensure_collection("two", 4)  # no lock error: other collection
    one.upsert(_records(3))
    two.upsert(_records(2))
    assert (one.count(), two.count()) == (3, 2)  # both open at once, each its own data


def test_missing_metadata_is_refused_without_deleting_and_repair_restores_it(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    config = {"partitions": 1, "path": str(tmp_path / "edge")}
    store = qdrant_make_store(config)
    store.ensure_collection("kept", 4)
    store.upsert(_records(7))
    store.close()
    meta = tmp_path / "edge" / "kept" / "memoweave.json"
    meta.unlink()
    for _ in range(2):  # refusing twice deletes nothing either
        with pytest.raises(VectorStoreError) as info:
            qdrant_make_store(config).ensure_collection("kept", 4)
        assert "memoweave.json" in str(info.value) and "nothing was deleted" in str(info.value)
        assert "doctor --repair" in info.value.hint
    assert (tmp_path / "edge" / "kept" / "shard").is_dir()
    repairer = qdrant_make_store(config)
    assert repairer.repair_collection("kept") == [
        f"rebuilt {meta} from the shard (dims=4, metric=cosine, datatype=float16)"
    ]
    assert repairer.repair_collection("kept") == []  # nothing left to repair
    repairer.ensure_collection("kept", 4)
    assert repairer.count() == 7


def test_garbage_metadata_is_refused_too(qdrant_make_store: Any, tmp_path: Path) -> None:
    config = {"partitions": 1, "path": str(tmp_path / "edge")}
    store = qdrant_make_store(config)
    store.ensure_collection("kept", 4, "dot")
    store.upsert(_records(3))
    store.close()
    (tmp_path / "edge" / "kept" / "memoweave.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(VectorStoreError, match="unreadable"):
        qdrant_make_store(config).ensure_collection("kept", 4, "dot")
    fixer = qdrant_make_store(config)
    assert fixer.repair_collection("kept")
    fixer.ensure_collection("kept", 4, "dot")
    assert fixer.count() == 3
    saved = json.loads((tmp_path / "edge" / "kept" / "memoweave.json").read_text())
    assert saved == {"dims": 4, "metric": "dot", "datatype": "float16"}


def test_leftovers_of_an_interrupted_create_or_drop_are_cleared(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    root = tmp_path / "edge"
    (root / ".c.creating-dead").mkdir(parents=True)
    (root / ".c.dropping-dead" / "shard").mkdir(parents=True)
    store = qdrant_make_store({"partitions": 1, "path": str(root)})
    store.ensure_collection("c", 4)
    store.upsert(_records(2))
    assert sorted(p.name for p in root.iterdir()) == ["c", "c.lock"]
    store.drop_collection()
    assert store.count() == 0  # recreated empty on next use
    assert sorted(p.name for p in root.iterdir()) == ["c", "c.lock"]


class _FlushCounter:
    """The engine's real shard, counting the flushes asked of it."""

    def __init__(self, shard: Any) -> None:
        self._shard, self.flushes = shard, 0

    def flush(self) -> None:
        self.flushes += 1
        self._shard.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shard, name)


def _count_flushes(store: Any) -> _FlushCounter:
    counter = _FlushCounter(store._engine.shards.loaded[0]._shard)
    store._engine.shards.loaded[0]._shard = counter
    return counter


class _FailingScroll:
    """The engine's real shard whose scroll fails (a disk error, say)."""

    def __init__(self, shard: Any) -> None:
        self._shard = shard

    def scroll(self, *_: Any, **__: Any) -> Any:
        raise OSError("injected: scroll failed")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shard, name)


def test_a_failing_holds_step_is_named_holds(qdrant_make_store: Any, tmp_path: Path) -> None:
    """``has_records`` asks the engine's ``holds``; a failure there is a
    ``VectorStoreError`` naming that step (not ``count``) with the engine's message."""
    store = qdrant_make_store({"partitions": 1, "path": str(tmp_path / "edge")})
    store.ensure_collection("c", 4)
    store.upsert(_records(3))
    assert store.has_records()
    part = store._engine.shards.loaded[0]
    part._shard = _FailingScroll(part._shard)
    with pytest.raises(VectorStoreError) as info:
        store.has_records()
    assert info.value.details["action"] == "holds"
    assert "injected: scroll failed" in info.value.details["engine_message"]
    assert "qdrant holds failed" in str(info.value)
    part._shard = part._shard._shard
    assert store.count() == 3


def test_only_a_store_that_wrote_flushes_on_close(qdrant_make_store: Any, tmp_path: Path) -> None:
    """A flush rewrites and fsyncs every segment's trackers even when nothing changed: a
    process that only read (``memoweave search``) closes without one; every write is
    still flushed before close and found after reopening."""
    config = {"partitions": 1, "path": str(tmp_path / "edge")}
    first = qdrant_make_store(config)
    first.ensure_collection("c", 4)
    first.upsert(_records(5))
    first.close()

    reader = qdrant_make_store(config)
    reader.ensure_collection("c", 4)
    flushes = _count_flushes(reader)
    assert len(reader.search([1.0, 2.0, 0.5, 0.25], top_k=3)) == 3
    assert len(reader.get([_records(1)[0].id], with_vectors=True)) == 1
    assert reader.count() == 5
    reader.close()
    assert flushes.flushes == 0

    writer = qdrant_make_store(config)
    writer.ensure_collection("c", 4)
    flushes = _count_flushes(writer)
    writer.upsert(_records(8))
    writer.close()
    assert flushes.flushes == 1

    again = qdrant_make_store(config)
    again.ensure_collection("c", 4)
    assert again.count() == 8


def test_close_at_exit_leaves_only_an_unwritten_shard_loaded(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    """A process about to end keeps a shard it only read loaded, with its folder lock,
    for the exit; a store that wrote is closed (flushed, lock released) as by close()."""
    import memoweave_qdrant.edge_engine as edge_engine

    config = {"partitions": 1, "path": str(tmp_path / "edge")}
    writer = qdrant_make_store(config)
    writer.ensure_collection("c", 4)
    writer.upsert(_records(5))
    left = len(edge_engine.LEFT_TO_EXIT)
    writer.close_at_exit()
    assert len(edge_engine.LEFT_TO_EXIT) == left

    reader = qdrant_make_store(config)  # the writer's lock was released
    reader.ensure_collection("c", 4)
    assert reader.count() == 5
    reader.close_at_exit()
    assert len(edge_engine.LEFT_TO_EXIT) == left + 1
    with pytest.raises(VectorStoreError):
        reader.count()  # closed for its caller
    blocked = qdrant_make_store(config)
    with pytest.raises(VectorStoreError, match="locked"):
        blocked.ensure_collection("c", 4)  # the lock stays until the exit
    shard, lock = edge_engine.LEFT_TO_EXIT.pop()
    shard.close()
    lock.release()
    again = qdrant_make_store(config)
    again.ensure_collection("c", 4)
    assert again.count() == 5
