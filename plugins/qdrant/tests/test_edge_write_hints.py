"""Writes in a partitioned Qdrant Edge collection load only the partitions they must: the
core's hints (``expect_writes``: what each written id holds now, nothing for a fresh id;
``expect_reads`` with the owner of a memory read by id) are used, checked, and a stale
or missing one falls back to looking everywhere, never leaving a second copy."""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

import pytest
from memoweave_qdrant.edge_routing import partition_of

from memoweave.errors import ValidationError, VectorStoreError
from memoweave.filters import Comparison
from memoweave.memory import Memory
from memoweave.providers.vector_store import VectorRecord
from memoweave.testing.doubles import HashingEmbedder

N = 8
USERS = [f"user-{i}" for i in range(16)]


def _config(tmp_path: Path) -> dict[str, Any]:
    return {"path": str(tmp_path / "edge"), "partitions": N}


def _records(n: int, users: list[str], seed: int = 5) -> list[VectorRecord]:
    rng = random.Random(seed)
    return [
        VectorRecord(
            str(uuid.UUID(int=rng.getrandbits(128))),
            [rng.uniform(-1, 1) for _ in range(4)],
            {"user_id": users[i % len(users)], "n": i},
        )
        for i in range(n)
    ]


def _loaded(store: Any) -> set[int]:
    return set(store._engine.shards.loaded)


def _copies(store: Any, id: str) -> list[int]:
    """The partitions holding ``id`` (every partition is asked)."""
    shards, pid = store._engine.shards, uuid.UUID(id)
    return sorted(p for p in shards.existing if (part := shards.get(p)) and part.present([pid]))


def _reopened(qdrant_make_store: Any, tmp_path: Path, records: list[VectorRecord]) -> Any:
    store = qdrant_make_store(_config(tmp_path))
    store.ensure_collection("c", 4)
    store.upsert(records)
    store.close()
    again = qdrant_make_store(_config(tmp_path))
    again.ensure_collection("c", 4)
    return again


def _by_home(users: list[str]) -> dict[int, str]:
    return {partition_of(u, N): u for u in users}


def test_hinted_writes_load_only_the_partitions_they_write(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    records = _records(64, USERS)
    store = _reopened(qdrant_make_store, tmp_path, records)
    homes = _by_home(USERS)
    assert len(homes) >= 3
    (p, user), (q, other), (r, third) = list(homes.items())[:3]
    fresh = VectorRecord(str(uuid.uuid4()), [1.0, 0.0, 0.0, 0.0], {"user_id": user})
    store.expect_writes({fresh.id: None})
    store.upsert([fresh])
    assert _loaded(store) == {p}  # a fresh id: no partition asked for a stale copy
    mine = next(x for x in records if x.payload["user_id"] == other)
    store.expect_writes({mine.id: mine.payload})
    store.upsert([VectorRecord(mine.id, mine.vector, {**mine.payload, "n": -1})])
    assert _loaded(store) == {p, q}
    theirs = next(x for x in records if x.payload["user_id"] == third)
    store.expect_writes({theirs.id: theirs.payload})
    store.delete([theirs.id])
    assert _loaded(store) == {p, q, r}
    assert store.get([theirs.id]) == [] and store.count() == 64
    assert store.get([mine.id])[0].payload["n"] == -1


def test_a_hinted_move_leaves_no_copy_and_a_stale_hint_falls_back(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    records = _records(48, USERS[:6])
    store = _reopened(qdrant_make_store, tmp_path, records)
    homes = _by_home(USERS[:6])
    (p, user), (q, other) = list(homes.items())[:2]
    first, second, third = [x for x in records if x.payload["user_id"] == user][:3]
    assert _copies(store, first.id) == _copies(store, second.id) == [p]
    store.expect_writes({first.id: first.payload})  # right: moved from p to q
    store.upsert([VectorRecord(first.id, first.vector, {"user_id": other})])
    assert _copies(store, first.id) == [q]
    store.expect_writes({second.id: {"user_id": other}})  # stale: second is in p
    store.upsert([VectorRecord(second.id, second.vector, {"user_id": other, "n": 7})])
    assert _copies(store, second.id) == [q]
    store.expect_writes({third.id: {"user_id": other}})  # stale: third is in p
    store.delete([third.id])
    assert _copies(store, third.id) == []
    assert store.count() == 47
    assert store.count(filter=Comparison("user_id", "eq", other)) == 8 + 2


def test_a_second_copy_left_by_a_crash_is_removed_by_an_unhinted_write(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    """A crash between a move's two steps (new copy written, old not yet deleted) leaves
    two copies; the rollback's unhinted upsert of the before-image asks every partition
    and leaves one."""
    records = _records(24, USERS[:4])
    store = _reopened(qdrant_make_store, tmp_path, records)
    homes = _by_home(USERS[:4])
    (p, user), (q, other) = list(homes.items())[:2]
    point = next(x for x in records if x.payload["user_id"] == user)
    moved = (uuid.UUID(point.id), point.vector, {"user_id": other})
    store._engine.shards.ensure(q).upsert([moved])  # the move's first step only
    assert _copies(store, point.id) == sorted([p, q])
    store.upsert([point])  # the rollback: back to user, no hint
    assert _copies(store, point.id) == [p]
    assert store.count() == 24


class _FailingUpdate:
    """A real shard whose writes fail (a full disk, say)."""

    def __init__(self, shard: Any) -> None:
        self._shard = shard

    def update(self, *_: Any) -> None:
        raise OSError("injected: write failed")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shard, name)


def test_a_failed_write_forgets_every_hint(qdrant_make_store: Any, tmp_path: Path) -> None:
    records = _records(16, USERS[:2])
    store = _reopened(qdrant_make_store, tmp_path, records)
    p = partition_of(USERS[0], N)
    part = store._engine.shards.ensure(p)
    fresh = VectorRecord(str(uuid.uuid4()), [0.0, 1.0, 0.0, 0.0], {"user_id": USERS[0]})
    other = VectorRecord(str(uuid.uuid4()), [0.0, 0.0, 1.0, 0.0], {"user_id": USERS[1]})
    store.expect_writes({fresh.id: None, other.id: None})
    part._shard = _FailingUpdate(part._shard)
    with pytest.raises(VectorStoreError):
        store.upsert([fresh])
    part._shard = part._shard._shard
    assert store._engine._writes._hints == {}  # other's hint is gone too
    store.upsert([fresh, other])
    assert store.count() == 18


def test_expect_writes_rejects_bad_input(qdrant_make_store: Any, tmp_path: Path) -> None:
    store = qdrant_make_store(_config(tmp_path))
    store.ensure_collection("c", 4)
    for bad in ({"not-a-uuid": None}, {str(uuid.uuid4()): ["user_id"]}, [str(uuid.uuid4())]):
        with pytest.raises(ValidationError):
            store.expect_writes(bad)
    assert store._engine._writes._hints == {}


def test_a_new_process_writing_by_id_loads_only_the_owners_partition(tmp_path: Path) -> None:
    """Memory's open, an add, and a get / update / delete by id (no user_id given: the
    owner comes from the history) each load the partition of the memory's user only."""
    store_config = {"provider": "qdrant", "config": _config(tmp_path)}
    config = {"history_db_path": str(tmp_path / "history.db"), "vector_store": store_config}
    ids: dict[str, str] = {}
    with Memory(config, embedder=HashingEmbedder(dims=32)) as memory:
        for user in USERS:
            added = memory.add(f"{user} drinks tea and plays chess", user_id=user, infer=False)
            ids[user] = added["results"][0]["id"]
    lowest = min(partition_of(u, N) for u in USERS)
    users = [u for u in _by_home(USERS).values() if partition_of(u, N) != lowest][:4]
    assert len(users) == 4  # partitions a walk in partition order would not reach first
    adder, getter, editor, deleter = users

    def fresh(run: Any) -> set[int]:
        with Memory(config, embedder=HashingEmbedder(dims=32)) as memory:
            run(memory)
            return _loaded(memory._providers.vector_store)

    assert fresh(lambda m: m.add("a new fact", user_id=adder, infer=False)) == {
        partition_of(adder, N)
    }
    assert fresh(lambda m: m.get(ids[getter])["memory"]) == {partition_of(getter, N)}
    assert fresh(lambda m: m.update(ids[editor], text="now plays go")) == {partition_of(editor, N)}
    assert fresh(lambda m: m.delete(ids[deleter])) == {partition_of(deleter, N)}
    with Memory(config, embedder=HashingEmbedder(dims=32)) as memory:
        assert memory.get(ids[deleter]) is None
        assert memory.get(ids[editor])["memory"] == "now plays go"
        assert len(memory.get_all(user_id=adder)["results"]) == 2
        assert [e["event"] for e in memory.history(ids[deleter])] == ["ADD", "DELETE"]


class _Crash(BaseException):
    """The process dies (after the store write, before the history commit)."""


def test_journaled_writes_that_fail_or_crash_leave_one_copy_or_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hinted delete whose history commit fails is rolled back (the record back, in
    its partition only); an add that dies before its commit is rolled back by the next
    open (its fresh record in no partition)."""
    from memoweave.errors import HistoryError
    from memoweave.memory.history import HistoryStore

    store_config = {"provider": "qdrant", "config": _config(tmp_path)}
    config = {"history_db_path": str(tmp_path / "history.db"), "vector_store": store_config}
    user = USERS[3]
    with Memory(config, embedder=HashingEmbedder(dims=32)) as memory:
        for other in USERS:
            memory.add(f"{other} drinks tea", user_id=other, infer=False)
        kept = memory.get_all(user_id=user)["results"][0]["id"]

    def broken(*_: Any, **__: Any) -> None:
        raise RuntimeError("injected: history commit failed")

    def die(*_: Any, **__: Any) -> None:
        raise _Crash

    with Memory(config, embedder=HashingEmbedder(dims=32)) as memory:
        monkeypatch.setattr(HistoryStore, "commit", broken)
        with pytest.raises(HistoryError):
            memory.delete(kept)
        monkeypatch.setattr(HistoryStore, "commit", die)
        with pytest.raises(_Crash):
            memory.add("a fact that never commits", user_id=user, infer=False)
        monkeypatch.undo()
        store: Any = memory._providers.vector_store
        store.close()
        memory._providers.history.close()
    with Memory(config, embedder=HashingEmbedder(dims=32)) as memory:
        found = memory.get_all(user_id=user)["results"]  # opening rolls the add back
        assert [m["id"] for m in found] == [kept]
        store = memory._providers.vector_store
        assert _copies(store, kept) == [partition_of(user, N)]
        assert store.count() == len(USERS)
