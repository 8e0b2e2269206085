"""Qdrant Edge engine: one in-process ``EdgeShard`` per collection, in ``<root>/<name>/``.

Layout: ``<root>/<name>/shard/`` holds the shard, ``<root>/<name>/memoweave.json`` its
``dims`` and ``metric`` (the shard API does not report its configuration back).

Processes: an engine holds an exclusive lock on ``<root>/<name>.lock`` from ``open`` to
``close``, taken before it looks at the folder, so a second process (or store) opening the
same collection, new or existing, fails at once with ``LockHeld`` (the store turns it into
a clear ``VectorStoreError``) and never sees a half-created collection.

Durability: a collection is created in ``<root>/.<name>.creating-<uuid>/`` and renamed to
``<root>/<name>/`` once its shard and metadata are written, so ``<root>/<name>/`` is
always complete; a drop renames it to ``<root>/.<name>.dropping-<uuid>/`` before deleting.
Leftovers of either (a crash mid-way) hold no acknowledged data and are removed by the
next ``open``. Closing flushes the shard first when this engine wrote to it (writes are
in Qdrant Edge's WAL as soon as ``update`` returns; the flush persists the segments).
Open never deletes a collection: a folder without its metadata file is an error naming
the repair (:meth:`EdgeEngine.repair` rebuilds the file from the shard).

Scale: every shard, new or existing, is opened with :func:`memoweave_qdrant.edge_index.
shard_config` (HNSW over int8-quantised vectors, original vectors and payloads on disk).
The first write of an engine, then one write per quarter of a threshold's worth of points
written, runs ``EdgeShard.optimize`` (a no-op taking microseconds unless a segment is
past the threshold), so the write that fills the unindexed tail pays for its index.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

from memoweave.errors import VectorStoreError
from memoweave.providers.file_lock import ExclusiveFileLock
from memoweave.providers.vector_store import HASH_KEY, SCOPE_KEYS, Metric
from memoweave_qdrant.edge_index import (
    DATATYPES,
    candidate_params,
    candidates,
    exact_params,
    shard_config,
)
from memoweave_qdrant.edge_pages import (
    SearchedPages,
    drop_cached_pages,
    prefetch_loaded,
    release_read_once,
)
from memoweave_qdrant.engine import Engine, Row
from memoweave_qdrant.filters import Clause, Condition, IsEmpty, Match, Range, Substring

_META = "memoweave.json"
_SHARD_CONFIG = "edge_config.json"
"""The shard's own configuration file (written by qdrant-edge), read only by repair."""
_DISTANCES: dict[str, Metric] = {"Cosine": "cosine", "Dot": "dot", "Euclid": "euclidean"}
LEFT_TO_EXIT: list[tuple[Any, ExclusiveFileLock | None]] = []
"""Shards left loaded for the process's exit, each with its folder lock
(:meth:`EdgeEngine.leave_to_exit`): held here so that no garbage collection closes them
before it."""


class EdgeEngine(Engine):
    """Qdrant Edge backend rooted at ``root`` (created on first use); segments holding
    more than ``index_threshold_kb`` of vectors get an HNSW index (0: never). A collection
    it creates stores its original vectors as ``datatype``; an existing one is opened
    with the datatype recorded in its metadata file (float32 when none is: collections
    created before the datatype was recorded)."""

    def __init__(self, root: Path, index_threshold_kb: int, datatype: str = "float32") -> None:
        import numpy
        import qdrant_edge

        self._q = qdrant_edge
        self._np = numpy
        self._root = root
        self._threshold_kb = index_threshold_kb
        self._datatype = datatype
        self._shard: Any = None
        self._unflushed = False
        """Whether this engine changed the shard since it was loaded or last flushed."""
        self._optimize_every = 0
        self._written = 0
        self._segments: Path | None = None
        """The open shard's segments folder (None until a shard is open)."""
        self._points: int | None = None
        """The shard's point count (estimate), kept until this engine next writes: the
        engine holds the collection's lock, so no one else changes it."""
        self._lock: ExclusiveFileLock | None = None
        self._lock_name: str | None = None
        self._mapping = threading.Lock()
        """Held by every call that can map or unmap shard files (load, writes, flush,
        close) and by :func:`release_read_once` and :class:`SearchedPages`, which
        advise addresses they read."""
        self._searched: SearchedPages | None = None
        """Releases the pages searches read from the open shard (None: no shard, or a
        process that ends after one command)."""
        self._resident_advice = True
        """Whether a shard opened gets the advice that only lowers resident memory
        (:meth:`expect_exit` turns it off)."""

    # -- lifecycle -------------------------------------------------------------------
    def open(self, name: str, dims: int, metric: Metric, *, create: bool) -> tuple[int, Metric]:
        self._close_shard()
        self._hold_lock(name)
        try:
            return self._open_locked(name, dims, metric, create=create)
        except BaseException:
            self._release_lock()
            raise

    def _open_locked(
        self, name: str, dims: int, metric: Metric, *, create: bool
    ) -> tuple[int, Metric]:
        q = self._q
        folder = self._root / name
        self._remove_leftovers(name)
        if folder.exists():
            meta = self._read_meta(name)
            dims, metric = int(meta["dims"]), meta["metric"]
            datatype = meta.get("datatype", "float32")
            prefetch_loaded(folder / "shard" / "segments")
        elif not create:
            raise LookupError(f"collection {name!r} does not exist")
        else:
            datatype = self._datatype
            staging = self._root / f".{name}.creating-{uuid.uuid4().hex}"
            staging.mkdir(parents=True)
            config = self._config(dims, metric, datatype)
            shard = q.EdgeShard.create(str(staging / "shard"), config)
            shard.close()
            meta = {"dims": dims, "metric": metric, "datatype": datatype}
            _write_json(staging / _META, meta)
            os.replace(staging, folder)
            _sync_dir(self._root)
        # An existing shard gets the same configuration: Qdrant Edge checks dims and
        # metric against it; its segments are indexed by the next optimisation.
        with self._mapping:
            config = self._config(dims, metric, datatype)
            self._shard = q.EdgeShard.load(str(folder / "shard"), config)
            if self._resident_advice:
                release_read_once(folder / "shard")
                self._searched = SearchedPages(folder / "shard", skip_first=True)
        self._segments = folder / "shard" / "segments"
        self._drop_cold_cache()
        if self._threshold_kb:  # a quarter of a threshold's worth of points (4 B/dimension)
            self._optimize_every = max(1, self._threshold_kb * 1024 // (dims * 4) // 4)
            self._written = self._optimize_every  # the first write checks the shard
        return dims, metric

    def _config(self, dims: int, metric: Metric, datatype: str) -> Any:
        q = self._q
        distance = {"cosine": q.Distance.Cosine, "dot": q.Distance.Dot}.get(
            metric, q.Distance.Euclid
        )
        return shard_config(q, dims, distance, self._threshold_kb, datatype)

    def _update(self, operation: Any, points: int) -> None:
        """Apply a write of ``points`` points (the point count is read again after it,
        even after a failed one)."""
        self._points = None
        with self._mapping:
            self._shard.update(operation)
            self._wrote(points)

    def _wrote(self, points: int) -> None:
        """Count ``points`` written; optimise the shard once enough have been. A flush
        after a pass that changed segments releases the ones it replaced (until then
        they stay on disk and mapped: at 100k, hundreds of MiB of resident memory). The
        log pages written until then are released at every such check, whether or not a
        pass ran (see :mod:`.edge_pages`): a writer keeps at most ~a check's worth of
        its log resident (~3 MiB at 384 dimensions) instead of all it wrote since the
        last pass (9 MiB at the end of a 100k fill)."""
        self._unflushed = True
        self._written += points
        if self._optimize_every and self._written >= self._optimize_every:
            self._written = 0
            if self._shard.optimize():
                self._shard.flush()
                self._unflushed = False
                self._drop_cold_cache()  # the segments just written
            if self._segments is not None:
                release_read_once(self._segments.parent)

    def _drop_cold_cache(self) -> None:
        """Drop the open shard's Cold files' page cache (:func:`drop_cached_pages`) only
        where nothing else bounds what searches make resident: a long-running process
        whose searched pages cannot be released. Where they are released after every
        search (:class:`SearchedPages`), the cache stays: dropped, each search of the
        first few hundred after an open or an optimisation pass read its pages back
        from disk (100k memories: 34-43 major faults a search, round one 31-46 vs 22-23
        ms at load ~15, for ~10 MiB less RSS)."""
        searched = self._searched
        releasable = searched is not None and searched.active
        if self._resident_advice and self._segments is not None and not releasable:
            drop_cached_pages(self._segments)

    def _read_meta(self, name: str) -> dict[str, Any]:
        meta_file = self._root / name / _META
        try:
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
            if (
                isinstance(meta, dict)
                and isinstance(meta.get("dims"), int)
                and meta["metric"]
                and meta.get("datatype", "float32") in DATATYPES
            ):
                return meta
            problem = "is not a memoweave metadata file"
        except FileNotFoundError:
            problem = "is missing"
        except (OSError, ValueError, KeyError) as exc:
            problem = f"is unreadable ({exc})"
        raise VectorStoreError(
            f"the Qdrant Edge collection {name!r} at {self._root / name} cannot be opened: "
            f"its metadata file {meta_file} {problem}; nothing was deleted",
            hint="Run `memoweave doctor --repair` to rebuild it from the shard's own "
            "configuration, or restore the file from a backup.",
            details={"collection": name, "location": str(self._root / name), "repair": True},
        )

    def repair(self, name: str) -> list[str]:
        """Rebuild a missing or unreadable metadata file of ``name`` from the shard's own
        configuration; returns what was repaired (nothing when the file is fine)."""
        self._close_shard()
        self._hold_lock(name)
        try:
            folder = self._root / name
            if not folder.exists():
                return []
            try:
                self._read_meta(name)
                return []
            except VectorStoreError:
                pass
            config_file = folder / "shard" / _SHARD_CONFIG
            try:
                vectors = json.loads(config_file.read_text(encoding="utf-8"))["vectors"][""]
                dims, metric = int(vectors["size"]), _DISTANCES[vectors["distance"]]
                datatype = vectors.get("datatype") or "float32"
                if datatype not in DATATYPES:
                    raise ValueError(f"unknown vector datatype {datatype!r}")
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise VectorStoreError(
                    f"cannot rebuild the metadata of {folder}: the shard configuration "
                    f"{config_file} is unreadable ({exc}); nothing was changed",
                    hint="Restore the collection folder from a backup.",
                    details={"collection": name, "location": str(folder)},
                ) from exc
            _write_json(folder / _META, {"dims": dims, "metric": metric, "datatype": datatype})
            return [
                f"rebuilt {folder / _META} from the shard "
                f"(dims={dims}, metric={metric}, datatype={datatype})"
            ]
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

    def _remove_leftovers(self, name: str) -> None:
        """Delete the staging folders a crash left behind (never acknowledged data)."""
        for prefix in (f".{name}.creating-", f".{name}.dropping-"):
            for leftover in self._root.glob(f"{prefix}*"):
                shutil.rmtree(leftover, ignore_errors=True)

    def ensure_indexes(
        self, keyword_fields: Sequence[str], float_fields: Sequence[str], text_field: str | None
    ) -> None:
        """Create the missing payload indexes (existing ones are kept as they are). Only
        the scope keys get extra graph links per value (HNSW search within one scope);
        the other fields are only ever filters (``enable_hnsw=False``). The indexes no
        read uses (the hash, looked up by writes; the text, used only when keyword
        search is handed to the store) stay on disk until read (``Memory.Cold``)."""
        q = self._q
        existing = set(self._shard.info().payload_schema)
        cold = q.Memory.Cold
        wanted = [
            (
                key,
                q.KeywordIndexParams(
                    enable_hnsw=key in SCOPE_KEYS, memory=cold if key == HASH_KEY else None
                ),
            )
            for key in keyword_fields
        ]
        wanted += [(key, q.FloatIndexParams(enable_hnsw=False)) for key in float_fields]
        if text_field is not None:
            text = q.TextIndexParams(
                tokenizer=q.TokenizerType.Multilingual, scoring=True, enable_hnsw=False, memory=cold
            )
            wanted.append((text_field, text))
        for key, params in wanted:
            if key not in existing:
                with self._mapping:
                    self._shard.update(q.UpdateOperation.create_field_index(key, params))
                self._unflushed = True

    def drop(self, name: str) -> None:
        self._close_shard()
        folder = self._root / name
        if folder.exists():
            doomed = self._root / f".{name}.dropping-{uuid.uuid4().hex}"
            os.replace(folder, doomed)
            _sync_dir(self._root)
            shutil.rmtree(doomed, ignore_errors=True)

    def close(self) -> None:
        try:
            self._close_shard()
        finally:
            self._release_lock()

    def expect_exit(self) -> None:
        """The process ends after its current command (the ``memoweave`` command line):
        the shards opened from now on skip the advice whose only use is to keep a
        long-running process's resident memory low, namely releasing the log and index
        storage read once at load (:func:`release_read_once`), dropping the Cold files'
        page cache (:func:`drop_cached_pages`) and releasing the pages each search read
        (:class:`SearchedPages`): at 1M memories ~0.1 s wall (~30 ms CPU) before the first
        result, and the next process finds the Cold pages this one's search read still
        cached. The read-ahead and everything a write does are kept."""
        self._resident_advice = False

    def leave_to_exit(self) -> bool:
        """Keep a shard nothing wrote since it loaded (or was last flushed) loaded until
        the process ends (:data:`LEFT_TO_EXIT`), with this engine's folder lock; a changed
        one is not kept (``False``): closing flushes it."""
        with self._mapping:
            if self._shard is None or self._unflushed:
                return False
            LEFT_TO_EXIT.append((self._shard, self._lock))
            self._shard, self._lock = None, None
            self._segments = self._searched = None
            self._points = None
            return True

    def _close_shard(self) -> None:
        """Flush what this engine changed, then close. A shard only read is not flushed:
        a flush rewrites and fsyncs every segment's trackers even when nothing changed
        (~80-230 ms at 1k-100k points, the biggest part of a read-only process's exit)."""
        shard, self._shard = self._shard, None
        self._segments = self._searched = None
        self._points = None
        unflushed, self._unflushed = self._unflushed, False
        if shard is not None:
            with self._mapping:
                try:
                    if unflushed:
                        shard.flush()
                finally:
                    shard.close()

    # -- writes ----------------------------------------------------------------------
    def upsert(self, points: Sequence[tuple[UUID, list[float], dict[str, Any]]]) -> None:
        q = self._q
        batch = [q.Point(pid, vector, payload) for pid, vector, payload in points]
        self._update(q.UpdateOperation.upsert_points(batch), len(batch))

    def delete(self, ids: Sequence[UUID]) -> None:
        self._update(self._q.UpdateOperation.delete_points(list(ids)), len(ids))

    def set_vector(self, id: UUID, vector: list[float]) -> None:
        q = self._q
        self._update(q.UpdateOperation.update_vectors([q.PointVectors(id, vector)]), 1)

    def set_payload(self, id: UUID, payload: dict[str, Any]) -> None:
        self._update(self._q.UpdateOperation.overwrite_payload([id], payload), 1)

    # -- reads -----------------------------------------------------------------------
    def search(self, vector: list[float], limit: int, where: Clause | None) -> list[Row]:
        """The ``limit`` nearest points ``where`` keeps, scored exactly on their original
        vectors (see :mod:`.edge_index`): a filter that Qdrant's payload-index estimate
        (~0.1 ms) says keeps at most ``candidates(limit)`` points scores each of them
        exactly; otherwise the quantised nearest ``candidates`` are found and the best
        ``limit`` of them scored exactly.

        The candidates are found without the filter when it drops at most ``limit``
        points (one scope holding the whole shard): a graph walk checks the filter at
        every point it visits, which doubled the query at 100k in one scope. The
        ``candidates(limit + dropped)`` nearest points are found unfiltered and ranked
        with the filter; if ``limit`` of them pass they are the filtered search's hits
        (every passing point left out is farther than all of them, up to the graph's
        approximation, which an unfiltered walk makes no worse), otherwise the
        candidates are found with the filter.

        After it (from the shard's second search on), the pages of original vectors and
        payloads it read are released (:class:`SearchedPages`), unless a call that maps
        files is running (a write)."""
        try:
            return self._search(vector, limit, where)
        finally:
            if self._mapping.acquire(blocking=False):
                try:
                    searched = self._searched
                    if searched is not None:  # not closed meanwhile
                        searched.release()
                finally:
                    self._mapping.release()

    def _search(self, vector: list[float], limit: int, where: Clause | None) -> list[Row]:
        q = self._q
        native = self._filter(where)
        nearest = q.Query.Nearest(vector)
        if self._points is None:
            self._points = int(self._shard.count(q.CountRequest(filter=None, exact=False)))
        total = self._points
        kept = total if native is None else self._estimate(native)
        if kept <= candidates(limit):
            return self._exact(nearest, limit, native)
        dropped = total - kept
        if dropped <= limit:
            hits = self._exact_among(nearest, limit, native, candidates(limit + dropped), None)
            if len(hits) == limit or native is None:
                return hits
        return self._exact_among(nearest, limit, native, candidates(limit), native)

    def _estimate(self, native: Any) -> int:
        """Qdrant's estimate of how many points ``native`` keeps (from payload indexes)."""
        return int(self._shard.count(self._q.CountRequest(filter=native, exact=False)))

    def _exact_among(
        self, nearest: Any, limit: int, native: Any, wanted: int, walk_filter: Any
    ) -> list[Row]:
        """The best ``limit`` points ``native`` keeps among the ``wanted`` nearest by
        quantised vectors (found with ``walk_filter``), scored exactly."""
        q = self._q
        request = q.QueryRequest(
            limit=wanted,
            query=nearest,
            filter=walk_filter,
            with_payload=False,
            params=candidate_params(q, wanted),
        )
        ids = {p.id for p in self._shard.query(request)}
        if not ids:
            return []
        among = q.HasIdCondition(ids)
        return self._exact(
            nearest, limit, q.Filter(must=[among] if native is None else [among, native])
        )

    def _exact(self, nearest: Any, limit: int, native: Any) -> list[Row]:
        """The ``limit`` nearest points ``native`` keeps, each scored on its original."""
        q = self._q
        request = q.QueryRequest(
            limit=limit, query=nearest, filter=native, with_payload=True, params=exact_params(q)
        )
        return [_row(p, score=p.score) for p in self._shard.query(request)]

    def text_search(self, text: str, field: str, limit: int, where: Clause | None) -> list[Row]:
        q = self._q
        request = q.QueryRequest(
            limit=limit,
            query=q.TextQuery(field, text),
            filter=self._filter(where),
            with_payload=True,
        )
        return [_row(p, score=p.score) for p in self._shard.query(request)]

    def retrieve(self, ids: Sequence[UUID], with_vectors: bool) -> list[Row]:
        records = self._shard.retrieve(list(ids), with_payload=True, with_vector=with_vectors)
        return [_row(r, with_vector=with_vectors) for r in records]

    def scroll(
        self, where: Clause | None, limit: int, offset: UUID | None
    ) -> tuple[list[Row], UUID | None]:
        request = self._q.ScrollRequest(
            offset=offset, limit=limit, filter=self._filter(where), with_payload=True
        )
        records, next_offset = self._shard.scroll(request)
        return [_row(r) for r in records], _uuid(next_offset)

    def count(self, where: Clause | None) -> int:
        return int(self._shard.count(self._q.CountRequest(filter=self._filter(where), exact=True)))

    # -- filters ---------------------------------------------------------------------
    def _filter(self, where: Clause | None) -> Any:
        return None if where is None else self._clause(where)

    def _clause(self, clause: Clause) -> Any:
        return self._q.Filter(
            must=[self._cond(c) for c in clause.must] or None,
            should=[self._cond(c) for c in clause.should] or None,
            must_not=[self._cond(c) for c in clause.must_not] or None,
        )

    def _cond(self, cond: Condition) -> Any:
        q = self._q
        if isinstance(cond, Clause):
            return self._clause(cond)
        if isinstance(cond, Match):
            # The binding reads a Python bool as the integer 0/1 (bool subclasses int);
            # numpy.bool_ is not an int, so it reaches Qdrant as a JSON boolean.
            value = self._np.bool_(cond.value) if isinstance(cond.value, bool) else cond.value
            return q.FieldCondition(cond.key, match=q.MatchValue(value))
        if isinstance(cond, Range):
            rng = q.RangeFloat(gt=cond.gt, gte=cond.gte, lt=cond.lt, lte=cond.lte)
            return q.FieldCondition(cond.key, range=rng)
        if isinstance(cond, Substring):
            return q.FieldCondition(cond.key, match=q.MatchSubstring(cond.text))
        if isinstance(cond, IsEmpty):
            return q.IsEmptyCondition(cond.key)
        raise TypeError(f"unknown condition {cond!r}")


def _write_json(path: Path, value: Any) -> None:
    """Write ``path`` atomically and durably (temporary file, fsync, rename)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(value, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    _sync_dir(path.parent)


def _sync_dir(folder: Path) -> None:
    """fsync a folder so that a rename in it survives a power cut (POSIX only)."""
    if os.name != "posix":  # pragma: no cover
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _uuid(value: Any) -> UUID | None:
    if value is None or isinstance(value, UUID):
        return value
    return UUID(str(value))


def _row(point: Any, *, score: float = 0.0, with_vector: bool = False) -> Row:
    vector = point.vector if with_vector else None
    if isinstance(vector, dict):  # unnamed vector reported as {"": [...]}
        vector = vector.get("")
    return Row(
        id=_uuid(point.id),  # type: ignore[arg-type]  # our points have UUID ids
        payload=dict(point.payload or {}),
        vector=list(vector) if vector is not None else None,
        score=float(score),
    )
