"""The partitions of an open Qdrant Edge collection: which exist, which are loaded, how
one is created or loaded, and the order a read that may need several asks them in.
:class:`memoweave_qdrant.edge_engine.EdgeEngine` owns the collection (lock, metadata,
lifecycle) and holds one :class:`PartitionSet`; the folders' layout is
:mod:`.edge_layout`'s, the routing :mod:`.edge_routing`'s."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoweave_qdrant.edge_filter import NativeFilter
from memoweave_qdrant.edge_layout import SINGLE, create_folder, part_name
from memoweave_qdrant.edge_routing import partition_of, pinned_user, route_key
from memoweave_qdrant.edge_shard import IndexSpec, LoadedShard
from memoweave_qdrant.filters import Clause


class PartitionSet:
    """The partitions of the collection in ``folder`` (none until :meth:`reset`):
    ``count`` of them (1: the single-shard layout), ``existing`` those whose folders
    exist, ``loaded`` those loaded. Thread-safe: creating, loading, closing and listing
    hold one lock."""

    def __init__(self, q: Any, filters: NativeFilter, threshold_kb: int) -> None:
        self._q = q
        self._filters = filters
        self._threshold_kb = threshold_kb
        self._folder: Path | None = None
        self.count = 1
        self._config: Any = None
        self._dims = 0
        self.existing: set[int] = set()
        self.loaded: dict[int, LoadedShard] = {}
        self._table = threading.RLock()
        self._indexes: IndexSpec | None = None
        self._expected: str | None = None
        """The user the next reads are about (:meth:`expect_user`), if any."""
        self.resident_advice = True
        """Whether a shard loaded gets the advice that only lowers resident memory."""

    def reset(self, folder: Path, count: int, config: Any, dims: int, existing: set[int]) -> None:
        """Describe the collection just opened (nothing loaded: :meth:`close` first)."""
        with self._table:
            self._folder, self.count, self._config, self._dims = folder, count, config, dims
            self.existing, self._indexes = set(existing), None

    def forget(self) -> None:
        """No collection any more (dropped): no partition exists."""
        with self._table:
            self.existing = set()

    # -- one partition ---------------------------------------------------------------
    def get(self, p: int) -> LoadedShard | None:
        """Partition ``p``, loaded; ``None`` if its folder does not exist."""
        with self._table:
            part = self.loaded.get(p)
            if part is not None or p not in self.existing:
                return part
            return self._load(p)

    def ensure(self, p: int) -> LoadedShard:
        """Partition ``p``, loaded, created first if its folder does not exist."""
        with self._table:
            part = self.loaded.get(p)
            if part is not None:
                return part
            if p not in self.existing:
                self._create(p)
            return self._load(p)

    def _load(self, p: int) -> LoadedShard:
        part = LoadedShard(
            self._q,
            self._filters,
            self._path(p),
            self._config,
            dims=self._dims,
            threshold_kb=self._threshold_kb,
            resident_advice=self.resident_advice,
        )
        self.loaded[p] = part
        if self._indexes is not None:
            part.ensure_indexes(self._indexes)
        return part

    def _create(self, p: int) -> None:
        config = self._config
        create_folder(
            self._collection() / part_name(p, self.count),
            lambda staging: self._q.EdgeShard.create(str(staging), config).close(),
        )
        self.existing.add(p)

    def _collection(self) -> Path:
        if self._folder is None:
            raise RuntimeError("no Qdrant Edge collection is open")
        return self._folder

    def _path(self, p: int) -> Path:
        folder = self._collection()
        if self.count == 1 and p == 0 and (folder / SINGLE).exists():
            return folder / SINGLE
        return folder / part_name(p, self.count)

    # -- routing ---------------------------------------------------------------------
    def home(self, payload: Mapping[str, Any]) -> int:
        """The partition a point with ``payload`` lives in."""
        return partition_of(route_key(payload), self.count) if self.count > 1 else 0

    def expect_user(self, user: str | None) -> None:
        """The partition of ``user`` (if any) comes first in :meth:`loaded_first`."""
        self._expected = user

    def loaded_first(self) -> list[int]:
        """The existing partitions: the loaded ones, then the one of the user the reads
        are about (:meth:`expect_user`), then the others."""
        with self._table:
            order = sorted(self.existing, key=lambda p: p not in self.loaded)
            if self._expected is not None:
                expected = partition_of(self._expected, self.count)
                order.sort(key=lambda p: p not in self.loaded and p != expected)
            return order

    def all(self) -> list[LoadedShard]:
        """Every existing partition, loaded."""
        return [part for p in self.loaded_first() if (part := self.get(p))]

    def targets(self, where: Clause | None) -> list[LoadedShard]:
        """The partitions a read filtered by ``where`` must ask."""
        user = pinned_user(where) if self.count > 1 else None
        if user is None:
            return self.all()
        part = self.get(partition_of(user, self.count))
        return [part] if part is not None else []

    # -- all of them -----------------------------------------------------------------
    def ensure_indexes(self, spec: IndexSpec) -> None:
        """The indexes of :meth:`.LoadedShard.ensure_indexes` on every loaded partition
        now and on every other one when it loads."""
        with self._table:
            self._indexes = spec
            for part in self.loaded.values():
                part.ensure_indexes(spec)

    def take_unwritten(self) -> list[LoadedShard] | None:
        """Every loaded partition, now no longer this set's, when nothing wrote to any
        since it loaded or was last flushed (none loaded: ``None``); otherwise ``None``."""
        with self._table:
            parts = list(self.loaded.values())
            if not parts or any(part.unflushed for part in parts):
                return None
            self.loaded = {}
            return parts

    def close(self) -> None:
        """Close every loaded partition (each flushed first if it was written to)."""
        with self._table:
            parts, self.loaded = list(self.loaded.values()), {}
        failure: BaseException | None = None
        for part in parts:
            try:
                part.close()
            except BaseException as exc:  # close the others, then raise the first
                failure = failure or exc
        if failure is not None:
            raise failure
