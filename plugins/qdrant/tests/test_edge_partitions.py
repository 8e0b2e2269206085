"""Qdrant Edge collections split into partitions by user_id: routing, lazy creation,
fan-out merges, moves between partitions, reopening, the single-shard layout kept as it
is, crash leftovers and repair; and a cold search for one user loading one partition."""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

import pytest
from memoweave_qdrant.edge_engine import LEFT_TO_EXIT
from memoweave_qdrant.edge_layout import part_name
from memoweave_qdrant.edge_routing import partition_of

from memoweave.errors import ConfigError, VectorStoreError
from memoweave.filters import And, Comparison
from memoweave.memory import Memory
from memoweave.plugins import load_registry
from memoweave.providers.vector_store import VectorRecord
from memoweave.testing.doubles import HashingEmbedder

N = 8
USERS = [f"user-{i}" for i in range(12)]


def _config(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    return {"path": str(tmp_path / "edge"), "partitions": N, **extra}


def _vec(rng: random.Random) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(4)]


def _records(n: int, users: list[str], seed: int = 3) -> list[VectorRecord]:
    rng = random.Random(seed)
    return [
        VectorRecord(
            str(uuid.UUID(int=rng.getrandbits(128))),
            _vec(rng),
            {"user_id": users[i % len(users)], "n": i},
        )
        for i in range(n)
    ]


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (sum(x * x for x in a) ** 0.5 * sum(y * y for y in b) ** 0.5)


def _folders(tmp_path: Path) -> set[str]:
    return {p.name for p in (tmp_path / "edge" / "c").iterdir() if p.name.startswith("shard")}


def _loaded(store: Any) -> set[int]:
    return set(store._engine.shards.loaded)


def test_points_live_in_their_users_partition_created_on_first_write(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    store = qdrant_make_store(_config(tmp_path))
    store.ensure_collection("c", 4)
    assert _folders(tmp_path) == set()  # no shard before a write routes to it
    meta = json.loads((tmp_path / "edge" / "c" / "memoweave.json").read_text())
    assert meta["partitions"] == N
    store.upsert(_records(5, ["solo"]))
    assert _folders(tmp_path) == {part_name(partition_of("solo", N), N)}  # one user, one shard
    store.upsert([*_records(60, USERS, seed=4), VectorRecord(str(uuid.uuid4()), [1, 0, 0, 0], {})])
    homes = {partition_of(u, N) for u in [*USERS, "solo", ""]}
    assert _folders(tmp_path) == {part_name(p, N) for p in homes}
    for user in USERS:
        part = store._engine.shards.loaded[partition_of(user, N)]
        assert part.count(None) >= 5  # the user's five points are in its partition
    assert store.count() == 66


def test_pinned_reads_load_only_the_users_partition(qdrant_make_store: Any, tmp_path: Path) -> None:
    config = _config(tmp_path)
    store = qdrant_make_store(config)
    store.ensure_collection("c", 4)
    records = _records(120, USERS)
    store.upsert(records)
    store.close()
    again = qdrant_make_store(config)
    again.ensure_collection("c", 4)
    assert _loaded(again) == set()  # opening loads no partition
    user = USERS[3]
    mine = Comparison("user_id", "eq", user)
    hits = again.search(records[3].vector, top_k=4, filter=mine)
    assert hits and all(h.payload["user_id"] == user for h in hits)
    assert again.count(filter=mine) == 10
    assert len(again.list(filter=And((mine, Comparison("n", "gte", 0))), limit=100).records) == 10
    assert again.has_records(filter=mine)
    assert _loaded(again) == {partition_of(user, N)}
    nobody = Comparison("user_id", "eq", "nobody-at-all")
    if partition_of("nobody-at-all", N) not in again._engine.shards.existing:
        assert again.search(records[0].vector, top_k=3, filter=nobody) == []
        assert again.count(filter=nobody) == 0
        assert _loaded(again) == {partition_of(user, N)}  # a missing partition is not made


def test_unpinned_reads_merge_every_partition(qdrant_make_store: Any, tmp_path: Path) -> None:
    store = qdrant_make_store(_config(tmp_path, vector_datatype="float32"))
    store.ensure_collection("c", 4)
    records = _records(150, USERS)
    store.upsert(records)
    query = records[7].vector
    best = sorted(records, key=lambda r: (-_cosine(query, r.vector), r.id))[:10]
    hits = store.search(query, top_k=10)
    assert [h.id for h in hits] == [r.id for r in best]
    assert [h.score for h in hits] == pytest.approx(
        [_cosine(query, r.vector) for r in best], abs=1e-3
    )
    two = Comparison("user_id", "in", (USERS[0], USERS[5]))  # not one user: fan out
    assert store.count(filter=two) == 26
    assert {h.payload["user_id"] for h in store.search(query, top_k=30, filter=two)} == {
        USERS[0],
        USERS[5],
    }
    seen, cursor = [], None
    while True:  # pages of 7 across partitions: every record once, in id order
        page = store.list(limit=7, cursor=cursor)
        seen += [r.id for r in page.records]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == sorted((r.id for r in records), key=uuid.UUID)
    assert store.count() == 150


def test_a_user_id_change_moves_the_point_without_a_stale_copy(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    store = qdrant_make_store(_config(tmp_path))
    store.ensure_collection("c", 4)
    records = _records(40, USERS[:4])
    store.upsert(records)
    moved = [r for r in records if partition_of(r.payload["user_id"], N) != partition_of("x9", N)][
        :2
    ]
    first, second = moved
    store.upsert([VectorRecord(first.id, first.vector, {"user_id": "x9"})])
    store.update(second.id, payload={"user_id": "x9", "moved": True})
    for record in (first, second):
        old = store._engine.shards.loaded[partition_of(record.payload["user_id"], N)]
        assert old.present([uuid.UUID(record.id)]) == set()
    assert store.count() == 40
    assert store.count(filter=Comparison("user_id", "eq", "x9")) == 2
    got = store.get([second.id], with_vectors=True)[0]
    assert got.payload == {"user_id": "x9", "moved": True}
    assert got.vector == pytest.approx(second.vector, abs=1e-2)  # float16 storage
    store.update(first.id, vector=[0.0, 0.0, 1.0, 0.0])  # found in its new partition
    assert store.get([first.id], with_vectors=True)[0].vector == pytest.approx([0, 0, 1, 0])
    store.delete([first.id, second.id, str(uuid.uuid4())])
    assert store.count() == 38


def test_reopening_finds_everything_and_keeps_the_recorded_count(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    store = qdrant_make_store(_config(tmp_path))
    store.ensure_collection("c", 4)
    records = _records(50, USERS)
    store.upsert(records)
    store.close()
    again = qdrant_make_store({**_config(tmp_path), "partitions": 3})  # only new collections
    again.ensure_collection("c", 4)
    assert again.count() == 50
    assert {r.id for r in again.get([r.id for r in records[::7]])} == {r.id for r in records[::7]}
    assert all(name.endswith(f"-of-{N:03d}") for name in _folders(tmp_path))


def test_a_single_shard_collection_opens_and_grows_unchanged(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    old = qdrant_make_store(_config(tmp_path, partitions=1))
    old.ensure_collection("c", 4)
    old.upsert(_records(30, USERS))
    old.close()
    meta_file = tmp_path / "edge" / "c" / "memoweave.json"
    assert "partitions" not in json.loads(meta_file.read_text())
    store = qdrant_make_store(_config(tmp_path))  # a partitioned default changes nothing
    store.ensure_collection("c", 4)
    assert _loaded(store) == {0}  # loaded on open, as always
    store.upsert(_records(30, ["someone-new"], seed=9))
    assert _folders(tmp_path) == {"shard"}
    assert store.count() == 60
    assert store.count(filter=Comparison("user_id", "eq", "someone-new")) == 30
    assert "partitions" not in json.loads(meta_file.read_text())


def test_crash_leftovers_of_a_partition_are_removed_and_a_foreign_one_refused(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    config = _config(tmp_path)
    store = qdrant_make_store(config)
    store.ensure_collection("c", 4)
    store.upsert(_records(20, USERS))
    store.close()
    folder = tmp_path / "edge" / "c"
    leftover = folder / f".{part_name(1, N)}.creating-dead"
    (leftover / "segments").mkdir(parents=True)
    again = qdrant_make_store(config)
    again.ensure_collection("c", 4)
    assert not leftover.exists()
    assert again.count() == 20
    again.close()
    (folder / part_name(0, 4)).mkdir()  # a shard of another partition count
    with pytest.raises(VectorStoreError, match="metadata records 8 partitions"):
        qdrant_make_store(config).ensure_collection("c", 4)
    assert len(_folders(tmp_path)) > 1  # nothing deleted


def test_a_lost_metadata_file_is_repaired_with_the_partition_count(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    config = _config(tmp_path)
    store = qdrant_make_store(config)
    store.ensure_collection("c", 4)
    store.upsert(_records(25, USERS))
    store.close()
    meta_file = tmp_path / "edge" / "c" / "memoweave.json"
    meta_file.unlink()
    with pytest.raises(VectorStoreError, match="is missing"):
        qdrant_make_store(config).ensure_collection("c", 4)
    fixer = qdrant_make_store(config)
    (done,) = fixer.repair_collection("c")
    assert f"partitions={N}" in done
    assert json.loads(meta_file.read_text())["partitions"] == N
    fixer.ensure_collection("c", 4)
    assert fixer.count() == 25


def test_drop_removes_every_partition(qdrant_make_store: Any, tmp_path: Path) -> None:
    store = qdrant_make_store(_config(tmp_path))
    store.ensure_collection("c", 4)
    store.upsert(_records(20, USERS))
    store.drop_collection()
    assert store.count() == 0
    assert _folders(tmp_path) == set()
    store.upsert(_records(3, ["back"]))
    assert store.count() == 3


def test_close_flushes_only_the_partitions_written(qdrant_make_store: Any, tmp_path: Path) -> None:
    config = _config(tmp_path)
    store = qdrant_make_store(config)
    store.ensure_collection("c", 4)
    store.upsert(_records(40, USERS))
    store.close()
    again = qdrant_make_store(config)
    again.ensure_collection("c", 4)
    assert again.count() == 40  # every partition loaded, none written
    written = partition_of(USERS[2], N)
    again.upsert(_records(2, [USERS[2]], seed=8))
    flushes: list[int] = []
    for p, part in again._engine.shards.loaded.items():
        part._shard = _FlushCounter(part._shard, p, flushes)
    again.close()
    assert flushes == [written]


class _FlushCounter:
    def __init__(self, shard: Any, p: int, flushes: list[int]) -> None:
        self._shard, self._p, self._flushes = shard, p, flushes

    def flush(self) -> None:
        self._flushes.append(self._p)
        self._shard.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shard, name)


def test_page_advice_and_exit_hints_hold_per_partition(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    config = _config(tmp_path)
    store = qdrant_make_store(config)
    store.ensure_collection("c", 4)
    store.upsert(_records(40, USERS))
    assert all(part._searched is not None for part in store._engine.shards.loaded.values())
    store.close()
    told = qdrant_make_store(config)
    told.expect_exit()
    told.ensure_collection("c", 4)
    assert told.count() == 40
    assert all(part._searched is None for part in told._engine.shards.loaded.values())
    loaded = len(told._engine.shards.loaded)
    left = len(LEFT_TO_EXIT)
    told.close_at_exit()  # nothing written: every partition is left loaded, one lock
    kept = LEFT_TO_EXIT[left:]
    assert len(kept) == loaded and sum(lock is not None for _, lock in kept) == 1
    with pytest.raises(VectorStoreError, match="locked"):
        qdrant_make_store(config).ensure_collection("c", 4)
    del LEFT_TO_EXIT[left:]
    for shard, lock in kept:
        shard.close()
        if lock is not None:
            lock.release()
    writer = qdrant_make_store(config)
    writer.ensure_collection("c", 4)
    writer.upsert(_records(1, ["late"], seed=5))
    before = len(LEFT_TO_EXIT)
    writer.close_at_exit()  # a written partition: closed (flushed), nothing left
    assert len(LEFT_TO_EXIT) == before
    reader = qdrant_make_store(config)  # the lock was released, the write flushed
    reader.ensure_collection("c", 4)
    assert reader.count() == 41


def test_the_partition_count_is_validated(qdrant_make_store: Any, tmp_path: Path) -> None:
    for bad in (0, 257, True, 2.5):
        with pytest.raises(ConfigError, match="partitions"):
            load_registry().create("vector_store", "qdrant", _config(tmp_path, partitions=bad))
    with pytest.raises(ConfigError, match="partitions"):
        load_registry().create(
            "vector_store", "qdrant", {"mode": "local", "path": str(tmp_path), "partitions": 4}
        )


def test_a_cold_search_for_one_user_loads_only_its_partition(tmp_path: Path) -> None:
    """Memory's open (its consistency check included) and a scoped search load the
    searched user's partition and no other."""
    store_config = {"provider": "qdrant", "config": _config(tmp_path)}
    config = {"history_db_path": str(tmp_path / "history.db"), "vector_store": store_config}
    with Memory(config, embedder=HashingEmbedder(dims=32)) as memory:
        for user in USERS:
            memory.add(f"{user} drinks tea and plays chess", user_id=user, infer=False)
    with Memory(config, embedder=HashingEmbedder(dims=32)) as memory:
        found = memory.search("tea", user_id=USERS[4])["results"]
        assert found and all(r["user_id"] == USERS[4] for r in found)
        store: Any = memory._providers.vector_store
        assert _loaded(store) == {partition_of(USERS[4], N)}
