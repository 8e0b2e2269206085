"""Qdrant Edge engine: a collection of in-process ``EdgeShard`` partitions in
``<root>/<name>/``, each loaded only when a call needs it (:class:`.edge_shard.LoadedShard`;
which exist and are loaded: :class:`.edge_partitions.PartitionSet`; the write path:
:class:`.edge_writes.PartitionWrites`).

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
pages in id order, counts summed). Reads by id ask the loaded partitions first, then the
one :meth:`EdgeEngine.expect_reads` named, and load the others only for ids not found
there (the search path's reads by id are of ids its own scoped search found; the core
names the owner of a memory it reads by id). An upsert that moves a point to another
partition (its ``user_id`` changed) deletes the copy left in the old one after writing
the new one; where a write looks for old copies, and how the store's ``expect_writes``
hints narrow that to one partition or none, is :mod:`.edge_writes`'s.

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

from collections.abc import Mapping, Sequence
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
    partition_folders,
    read_meta,
    rebuilt_meta,
    remove_folder,
    remove_leftovers,
    write_json,
)
from memoweave_qdrant.edge_partitions import PartitionSet
from memoweave_qdrant.edge_routing import merge_hits, merge_pages, pinned_user
from memoweave_qdrant.edge_shard import edge_config
from memoweave_qdrant.edge_writes import PartitionWrites, Point
from memoweave_qdrant.engine import Engine, Row
from memoweave_qdrant.filters import Clause

LEFT_TO_EXIT: list[tuple[Any, ExclusiveFileLock | None]] = []
"""Shards left loaded for the process's exit, the first of a collection's with its folder
lock (:meth:`EdgeEngine.leave_to_exit`): held here so that no garbage collection closes
them before it."""


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
        self._root = root
        self._threshold_kb = index_threshold_kb
        self._datatype = datatype
        self._new_partitions = partitions
        self._lock: ExclusiveFileLock | None = None
        self._lock_name: str | None = None
        self._dims = 0
        self._metric: Metric = "cosine"
        self._filters = NativeFilter(qdrant_edge, numpy)
        self.shards = PartitionSet(qdrant_edge, self._filters, index_threshold_kb)
        """The open collection's partitions."""
        self._writes = PartitionWrites(self.shards)

    # -- lifecycle -------------------------------------------------------------------
    def open(self, name: str, dims: int, metric: Metric, *, create: bool) -> tuple[int, Metric]:
        self.shards.close()
        self._hold_lock(name)
        try:
            return self._open_locked(name, dims, metric, create=create)
        except BaseException:
            self.shards.close()
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
        count = int(meta.get("partitions", 1))
        config = edge_config(
            self._q, self._dims, self._metric, self._threshold_kb, meta.get("datatype", "float32")
        )
        partitioned = "partitions" in meta
        existing = partition_folders(folder, name, count) if partitioned else {0}
        self.shards.reset(folder, count, config, self._dims, existing)
        if not partitioned:  # single shard, loaded now as always
            self.shards.get(0)
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

    def repair(self, name: str) -> list[str]:
        """Rebuild a missing or unreadable metadata file of ``name`` from its shards' own
        configuration (the partition count from their folder names); returns what was
        repaired (nothing when the file is fine)."""
        self.shards.close()
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
        self.shards.ensure_indexes((tuple(keyword_fields), tuple(float_fields), text_field))

    def drop(self, name: str) -> None:
        self.shards.close()
        self.shards.forget()
        folder = self._root / name
        if folder.exists():
            remove_folder(folder)

    def close(self) -> None:
        try:
            self.shards.close()
        finally:
            self._release_lock()

    def expect_exit(self) -> None:
        """The process ends after its current command (the ``memoweave`` command line):
        the shards loaded from now on skip the advice whose only use is to keep a
        long-running process's resident memory low (see :class:`.LoadedShard`): at 1M
        memories ~0.1 s wall (~30 ms CPU) before the first result, and the next process
        finds the Cold pages this one's search read still cached."""
        self.shards.resident_advice = False

    def leave_to_exit(self) -> bool:
        """Keep the loaded partitions until the process ends (:data:`LEFT_TO_EXIT`), with
        this engine's folder lock, when nothing wrote to any since it loaded (or was last
        flushed); otherwise keep none (``False``): closing flushes the changed ones."""
        parts = self.shards.take_unwritten()
        if parts is None:
            return False
        lock, self._lock = self._lock, None
        for part in parts:
            LEFT_TO_EXIT.append((part.leave(), lock))
            lock = None
        return True

    # -- writes (:class:`.PartitionWrites`) ------------------------------------------
    def expect_writes(self, stored: Mapping[UUID, Mapping[str, Any] | None]) -> None:
        """Hints for the next write of each id (:meth:`.PartitionWrites.expect`)."""
        self._writes.expect(stored)

    def upsert(self, points: Sequence[Point]) -> None:
        self._writes.upsert(points)

    def delete(self, ids: Sequence[UUID]) -> None:
        self._writes.delete(ids)

    def set_vector(self, id: UUID, vector: list[float]) -> None:
        self._writes.set_vector(id, vector)

    def set_payload(self, id: UUID, payload: dict[str, Any]) -> None:
        """Replace the payload; a point whose new ``user_id`` belongs to another
        partition moves there."""
        self._writes.set_payload(id, payload)

    # -- reads -----------------------------------------------------------------------
    def search(self, vector: list[float], limit: int, where: Clause | None) -> list[Row]:
        parts = self.shards.targets(where)
        if len(parts) == 1:
            return parts[0].search(vector, limit, where)
        hits = (part.search(vector, limit, where) for part in parts)
        return merge_hits(hits, limit, ascending=self._metric == "euclidean")

    def text_search(self, text: str, field: str, limit: int, where: Clause | None) -> list[Row]:
        parts = self.shards.targets(where)
        if len(parts) == 1:
            return parts[0].text_search(text, field, limit, where)
        hits = (part.text_search(text, field, limit, where) for part in parts)
        return merge_hits(hits, limit, ascending=False)

    def retrieve(self, ids: Sequence[UUID], with_vectors: bool) -> list[Row]:
        shards = self.shards
        if shards.count == 1:
            part = shards.get(0)
            return part.retrieve(ids, with_vectors) if part is not None else []
        missing, rows = list(ids), []
        for p in shards.loaded_first():
            if not missing:
                break
            part = shards.get(p)
            if part is not None:
                got = part.retrieve(missing, with_vectors)
                rows += got
                taken = {row.id for row in got}
                missing = [pid for pid in missing if pid not in taken]
        return rows

    def scroll(
        self, where: Clause | None, limit: int, offset: UUID | None
    ) -> tuple[list[Row], UUID | None]:
        parts = self.shards.targets(where)
        if len(parts) == 1:
            return parts[0].scroll(where, limit, offset)
        return merge_pages([part.scroll(where, limit, offset) for part in parts], limit)

    def count(self, where: Clause | None) -> int:
        return sum(part.count(where) for part in self.shards.targets(where))

    def holds(self, where: Clause | None) -> bool:
        """Whether any point matches ``where``: the partitions are asked in the order of
        :meth:`.PartitionSet.loaded_first`, each loaded only if the ones before hold none."""
        shards = self.shards
        if shards.count > 1 and pinned_user(where) is not None:
            return any(part.scroll(where, 1, None)[0] for part in shards.targets(where))
        for p in shards.loaded_first():
            part = shards.get(p)
            if part is not None and part.scroll(where, 1, None)[0]:
                return True
        return False

    def expect_reads(self, where: Clause | None) -> None:
        """Reads that may need several partitions look first in the partition of the
        ``user_id`` that ``where`` pins (e.g. the consistency check before a scoped
        search), so that a search for one user loads one partition."""
        self.shards.expect_user(pinned_user(where))
