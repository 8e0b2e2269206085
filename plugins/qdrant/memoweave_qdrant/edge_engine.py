"""Qdrant Edge engine: a collection of in-process ``EdgeShard`` partitions in
``<root>/<name>/``, each loaded only when a call needs it (:class:`.edge_shard.LoadedShard`).

Layouts, recorded in ``<root>/<name>/memoweave.json`` with the collection's ``dims``,
``metric`` and ``datatype`` (the shard API does not report its configuration back):

- partitioned (``"partitions": N``, N > 1, new collections by default): partition ``p``
  is the shard ``<root>/<name>/shard-PPP-of-NNN/``, created by the first write routed to
  it; a point lives in the partition of its ``user_id`` (:mod:`.edge_routing`), so a read
  pinned to one user loads one partition and a one-user home holds one shard;
- single-shard (no ``"partitions"``: every collection created before partitions, or a
  new one configured with ``partitions: 1``): one shard ``<root>/<name>/shard/``, loaded
  on open, exactly as before. Existing collections keep their layout; nothing is moved.

Reads with no user pinned ask every existing partition and merge (hits by score, scroll
pages in id order, counts summed). Calls by id ask the loaded partitions first and load
the others only for ids not found there (the search path's reads by id are of ids its
own scoped search found). An upsert that moves a point to another partition (its
``user_id`` changed) deletes the copy left in the old one after writing the new one.

Processes: an engine holds an exclusive lock on ``<root>/<name>.lock`` from ``open`` to
``close``, taken before it looks at the folder, so a second process (or store) opening the
same collection, new or existing, fails at once with ``LockHeld`` (the store turns it into
a clear ``VectorStoreError``) and never sees a half-created collection.

Durability: a collection is created in ``<root>/.<name>.creating-<uuid>/`` and renamed to
``<root>/<name>/`` once its metadata (and, single-shard, its shard) is written, a
partition in ``<root>/<name>/.shard-PPP-of-NNN.creating-<uuid>/`` renamed into place, so
every folder under its final name is complete; a drop renames the collection to
``<root>/.<name>.dropping-<uuid>/`` before deleting. Leftovers of either (a crash
mid-way) hold no acknowledged data and are removed by the next ``open``. Open never
deletes a collection: a folder without its metadata file is an error naming the repair
(:meth:`EdgeEngine.repair` rebuilds the file from the shards' own configuration).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

from memoweave.errors import VectorStoreError
from memoweave.providers.file_lock import ExclusiveFileLock
from memoweave.providers.vector_store import Metric
from memoweave_qdrant.edge_filter import NativeFilter
from memoweave_qdrant.edge_layout import (
    META,
    SINGLE,
    create_folder,
    part_name,
    partition_folders,
    read_meta,
    rebuilt_meta,
    remove_folder,
    remove_leftovers,
    write_json,
)
from memoweave_qdrant.edge_routing import (
    merge_hits,
    merge_pages,
    partition_of,
    pinned_user,
    route_key,
)
from memoweave_qdrant.edge_shard import IndexSpec, LoadedShard, edge_config
from memoweave_qdrant.engine import Engine, Row
from memoweave_qdrant.filters import Clause

LEFT_TO_EXIT: list[tuple[Any, ExclusiveFileLock | None]] = []
"""Shards left loaded for the process's exit, the first of a collection's with its folder
lock (:meth:`EdgeEngine.leave_to_exit`): held here so that no garbage collection closes
them before it."""
Point = tuple[UUID, list[float], dict[str, Any]]


class EdgeEngine(Engine):
    """Qdrant Edge backend rooted at ``root`` (created on first use); segments holding
    more than ``index_threshold_kb`` of vectors get an HNSW index (0: never). A collection
    it creates stores its original vectors as ``datatype`` and is split into
    ``partitions`` shards by ``user_id`` (1: one shard); an existing one is opened with
    the datatype and layout its metadata file records (float32, one shard, when none is:
    collections created before either was recorded)."""

    def __init__(
        self, root: Path, index_threshold_kb: int, datatype: str = "float32", partitions: int = 1
    ) -> None:
        import numpy
        import qdrant_edge

        self._q = qdrant_edge
        self._filters = NativeFilter(qdrant_edge, numpy)
        self._root = root
        self._threshold_kb = index_threshold_kb
        self._datatype = datatype
        self._new_partitions = partitions
        self._lock: ExclusiveFileLock | None = None
        self._lock_name: str | None = None
        self._folder: Path | None = None
        """The open collection's folder (None: none open)."""
        self._partitions = 1
        """The open collection's partition count (1: the single-shard layout)."""
        self._config: Any = None
        self._dims = 0
        self._metric: Metric = "cosine"
        self._existing: set[int] = set()
        """The partitions whose folders exist."""
        self._parts: dict[int, LoadedShard] = {}
        """The loaded partitions."""
        self._table = threading.RLock()
        """Held while partitions are created, loaded, closed or listed."""
        self._indexes: IndexSpec | None = None
        self._expected: str | None = None
        """The user the next reads are about (:meth:`expect_reads`), if any."""
        self._resident_advice = True
        """Whether a shard loaded gets the advice that only lowers resident memory
        (:meth:`expect_exit` turns it off)."""

    # -- lifecycle -------------------------------------------------------------------
    def open(self, name: str, dims: int, metric: Metric, *, create: bool) -> tuple[int, Metric]:
        self._close_parts()
        self._hold_lock(name)
        try:
            return self._open_locked(name, dims, metric, create=create)
        except BaseException:
            self._close_parts()
            self._release_lock()
            raise

    def _open_locked(
        self, name: str, dims: int, metric: Metric, *, create: bool
    ) -> tuple[int, Metric]:
        folder = self._root / name
        remove_leftovers(self._root, name)
        if folder.exists():
            meta = read_meta(folder, name)
        elif not create:
            raise LookupError(f"collection {name!r} does not exist")
        else:
            meta = self._create(name, dims, metric)
        self._dims, self._metric = int(meta["dims"]), meta["metric"]
        self._partitions = int(meta.get("partitions", 1))
        self._config = edge_config(
            self._q, self._dims, self._metric, self._threshold_kb, meta.get("datatype", "float32")
        )
        self._folder, self._indexes = folder, None
        if "partitions" in meta:
            self._existing = partition_folders(folder, name, self._partitions)
        else:  # single shard, loaded now as always
            self._existing = {0}
            self._part(0, create=False)
        return self._dims, self._metric

    def _create(self, name: str, dims: int, metric: Metric) -> dict[str, Any]:
        """Create collection ``name`` (its metadata; its shard when single-shard)."""
        meta: dict[str, Any] = {"dims": dims, "metric": metric, "datatype": self._datatype}
        if self._new_partitions > 1:
            meta["partitions"] = self._new_partitions

        def fill(staging: Path) -> None:
            staging.mkdir(parents=True)
            if self._new_partitions == 1:
                config = edge_config(self._q, dims, metric, self._threshold_kb, self._datatype)
                self._q.EdgeShard.create(str(staging / SINGLE), config).close()
            write_json(staging / META, meta)

        create_folder(self._root / name, fill)
        return meta

    def _path(self, p: int) -> Path:
        assert self._folder is not None
        if self._partitions == 1 and p == 0 and (self._folder / SINGLE).exists():
            return self._folder / SINGLE
        return self._folder / part_name(p, self._partitions)

    def _part(self, p: int, *, create: bool) -> LoadedShard | None:
        """Partition ``p``, loaded (created first if missing and ``create``); ``None``
        if it does not exist and ``create`` is false."""
        with self._table:
            part = self._parts.get(p)
            if part is not None:
                return part
            if p not in self._existing:
                if not create:
                    return None
                self._create_part(p)
            part = LoadedShard(
                self._q,
                self._filters,
                self._path(p),
                self._config,
                dims=self._dims,
                threshold_kb=self._threshold_kb,
                resident_advice=self._resident_advice,
            )
            self._parts[p] = part
            if self._indexes is not None:
                part.ensure_indexes(self._indexes)
            return part

    def _create_part(self, p: int) -> None:
        assert self._folder is not None
        config = self._config
        create_folder(
            self._folder / part_name(p, self._partitions),
            lambda staging: self._q.EdgeShard.create(str(staging), config).close(),
        )
        self._existing.add(p)

    def _loaded_first(self) -> list[int]:
        """The existing partitions: the loaded ones, then the one of the user the reads
        are about (:meth:`expect_reads`), then the others."""
        with self._table:
            order = sorted(self._existing, key=lambda p: p not in self._parts)
            if self._expected is not None:
                expected = partition_of(self._expected, self._partitions)
                order.sort(key=lambda p: p not in self._parts and p != expected)
            return order

    def _all(self) -> list[LoadedShard]:
        """Every existing partition, loaded."""
        return [part for p in self._loaded_first() if (part := self._part(p, create=False))]

    def _targets(self, where: Clause | None) -> list[LoadedShard]:
        """The partitions a read filtered by ``where`` must ask."""
        user = pinned_user(where) if self._partitions > 1 else None
        if user is None:
            return self._all()
        part = self._part(partition_of(user, self._partitions), create=False)
        return [part] if part is not None else []

    def _home(self, payload: dict[str, Any]) -> int:
        """The partition a point with ``payload`` lives in."""
        return partition_of(route_key(payload), self._partitions) if self._partitions > 1 else 0

    def repair(self, name: str) -> list[str]:
        """Rebuild a missing or unreadable metadata file of ``name`` from its shards' own
        configuration (the partition count from their folder names); returns what was
        repaired (nothing when the file is fine)."""
        self._close_parts()
        self._hold_lock(name)
        try:
            folder = self._root / name
            if not folder.exists():
                return []
            try:
                read_meta(folder, name)
                return []
            except VectorStoreError:
                pass
            meta = rebuilt_meta(folder, name)
            write_json(folder / META, meta)
            described = ", ".join(f"{k}={v}" for k, v in meta.items())
            return [f"rebuilt {folder / META} from the shard ({described})"]
        finally:
            self._release_lock()

    def _hold_lock(self, name: str) -> None:
        if self._lock is not None and self._lock_name != name:
            self._release_lock()
        if self._lock is None:
            lock = ExclusiveFileLock(self._root / f"{name}.lock")
            lock.acquire()
            self._lock, self._lock_name = lock, name

    def _release_lock(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def ensure_indexes(
        self, keyword_fields: Sequence[str], float_fields: Sequence[str], text_field: str | None
    ) -> None:
        """The indexes of :meth:`.LoadedShard.ensure_indexes` on every loaded partition
        now and on every other one when it loads."""
        with self._table:
            self._indexes = (tuple(keyword_fields), tuple(float_fields), text_field)
            for part in self._parts.values():
                part.ensure_indexes(self._indexes)

    def drop(self, name: str) -> None:
        self._close_parts()
        self._existing = set()
        folder = self._root / name
        if folder.exists():
            remove_folder(folder)

    def close(self) -> None:
        try:
            self._close_parts()
        finally:
            self._release_lock()

    def expect_exit(self) -> None:
        """The process ends after its current command (the ``memoweave`` command line):
        the shards loaded from now on skip the advice whose only use is to keep a
        long-running process's resident memory low (see :class:`.LoadedShard`): at 1M
        memories ~0.1 s wall (~30 ms CPU) before the first result, and the next process
        finds the Cold pages this one's search read still cached."""
        self._resident_advice = False

    def leave_to_exit(self) -> bool:
        """Keep the loaded partitions until the process ends (:data:`LEFT_TO_EXIT`), with
        this engine's folder lock, when nothing wrote to any since it loaded (or was last
        flushed); otherwise keep none (``False``): closing flushes the changed ones."""
        with self._table:
            parts = list(self._parts.values())
            if not parts or any(part.unflushed for part in parts):
                return False
            lock: ExclusiveFileLock | None = self._lock
            for part in parts:
                LEFT_TO_EXIT.append((part.leave(), lock))
                lock = None
            self._parts, self._lock = {}, None
            return True

    def _close_parts(self) -> None:
        """Close every loaded partition (each flushed first if it was written to)."""
        with self._table:
            parts, self._parts = list(self._parts.values()), {}
        failure: BaseException | None = None
        for part in parts:
            try:
                part.close()
            except BaseException as exc:  # close the others, then raise the first
                failure = failure or exc
        if failure is not None:
            raise failure

    # -- writes ----------------------------------------------------------------------
    def upsert(self, points: Sequence[Point]) -> None:
        homes: dict[int, list[Point]] = {}
        for point in points:
            homes.setdefault(self._home(point[2]), []).append(point)
        for p, group in homes.items():
            part = self._part(p, create=True)
            assert part is not None
            part.upsert(group)
        if self._partitions > 1:  # the copies a user_id change left in other partitions
            for p in self._loaded_first():
                elsewhere = [pid for q, group in homes.items() if q != p for pid, _, _ in group]
                part = self._part(p, create=False)
                stale = part.present(elsewhere) if part is not None and elsewhere else set()
                if part is not None and stale:
                    part.delete(sorted(stale))

    def delete(self, ids: Sequence[UUID]) -> None:
        for part, found in self._locate(ids):
            part.delete(found)

    def set_vector(self, id: UUID, vector: list[float]) -> None:
        self._holder(id).set_vector(id, vector)

    def set_payload(self, id: UUID, payload: dict[str, Any]) -> None:
        """Replace the payload; a point whose new ``user_id`` belongs to another
        partition is written there first, then deleted from its old one."""
        part = self._holder(id)
        target = self._part(self._home(payload), create=True)
        assert target is not None
        if target is part:
            part.set_payload(id, payload)
            return
        (row,) = part.retrieve([id], True)
        assert row.vector is not None
        target.upsert([(id, row.vector, payload)])
        part.delete([id])

    def _holder(self, id: UUID) -> LoadedShard:
        for part, _ in self._locate([id]):
            return part
        raise LookupError(f"point {id} does not exist")

    def _locate(self, ids: Sequence[UUID]) -> list[tuple[LoadedShard, list[UUID]]]:
        """The partitions holding ``ids``, each with its ids (the loaded ones are asked
        first; the others are loaded only while ids are still missing)."""
        if self._partitions == 1:
            part = self._part(0, create=False)
            return [(part, list(ids))] if part is not None and ids else []
        missing, found = set(ids), []
        for p in self._loaded_first():
            part = self._part(p, create=False)
            if not missing:
                break
            here = part.present(sorted(missing)) if part is not None else set()
            if part is not None and here:
                found.append((part, sorted(here)))
                missing -= here
        return found

    # -- reads -----------------------------------------------------------------------
    def search(self, vector: list[float], limit: int, where: Clause | None) -> list[Row]:
        parts = self._targets(where)
        if len(parts) == 1:
            return parts[0].search(vector, limit, where)
        hits = (part.search(vector, limit, where) for part in parts)
        return merge_hits(hits, limit, ascending=self._metric == "euclidean")

    def text_search(self, text: str, field: str, limit: int, where: Clause | None) -> list[Row]:
        parts = self._targets(where)
        if len(parts) == 1:
            return parts[0].text_search(text, field, limit, where)
        hits = (part.text_search(text, field, limit, where) for part in parts)
        return merge_hits(hits, limit, ascending=False)

    def retrieve(self, ids: Sequence[UUID], with_vectors: bool) -> list[Row]:
        if self._partitions == 1:
            part = self._part(0, create=False)
            return part.retrieve(ids, with_vectors) if part is not None else []
        missing, rows = list(ids), []
        for p in self._loaded_first():
            part = self._part(p, create=False)
            if not missing:
                break
            if part is not None:
                got = part.retrieve(missing, with_vectors)
                rows += got
                taken = {row.id for row in got}
                missing = [pid for pid in missing if pid not in taken]
        return rows

    def scroll(
        self, where: Clause | None, limit: int, offset: UUID | None
    ) -> tuple[list[Row], UUID | None]:
        parts = self._targets(where)
        if len(parts) == 1:
            return parts[0].scroll(where, limit, offset)
        return merge_pages([part.scroll(where, limit, offset) for part in parts], limit)

    def count(self, where: Clause | None) -> int:
        return sum(part.count(where) for part in self._targets(where))

    def holds(self, where: Clause | None) -> bool:
        """Whether any point matches ``where``: the partitions are asked in the order of
        :meth:`_loaded_first`, each loaded only if the ones before hold none."""
        user = pinned_user(where) if self._partitions > 1 else None
        if user is not None:
            return any(part.scroll(where, 1, None)[0] for part in self._targets(where))
        for p in self._loaded_first():
            part = self._part(p, create=False)
            if part is not None and part.scroll(where, 1, None)[0]:
                return True
        return False

    def expect_reads(self, where: Clause | None) -> None:
        """Reads that may need several partitions look first in the partition of the
        ``user_id`` that ``where`` pins (e.g. the consistency check before a scoped
        search), so that a search for one user loads one partition."""
        self._expected = pinned_user(where)
