"""One loaded Qdrant Edge shard: its load, writes, optimisation cadence, searches and
page advice (:mod:`.edge_pages`). :class:`memoweave_qdrant.edge_engine.EdgeEngine` owns
the collection (lock, metadata, creation, partitions) and holds one of these per shard
it has loaded.

Scale: every shard, new or existing, is loaded with :func:`memoweave_qdrant.edge_index.
shard_config` (HNSW over int8-quantised vectors, original vectors and payloads on disk).
The first write after the load, then one write per quarter of a threshold's worth of
points written, runs ``EdgeShard.optimize`` (a no-op taking microseconds unless a segment
is past the threshold), so the write that fills the unindexed tail pays for its index.
Closing flushes the shard first when it was written to (writes are in Qdrant Edge's WAL
as soon as ``update`` returns; the flush persists the segments).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

from memoweave.providers.vector_store import HASH_KEY, SCOPE_KEYS
from memoweave_qdrant.edge_filter import NativeFilter
from memoweave_qdrant.edge_index import candidate_params, candidates, exact_params, shard_config
from memoweave_qdrant.edge_pages import (
    SearchedPages,
    drop_cached_pages,
    prefetch_cold,
    prefetch_loaded,
    release_read_once,
    segment_names,
)
from memoweave_qdrant.engine import Row, point_id, row_of
from memoweave_qdrant.filters import Clause

IndexSpec = tuple[tuple[str, ...], tuple[str, ...], str | None]
"""Payload indexes a shard must have: keyword fields, float fields, text field or None."""


def edge_config(q: Any, dims: int, metric: str, threshold_kb: int, datatype: str) -> Any:
    """The ``EdgeConfig`` every shard of a collection is created and loaded with."""
    distance = {"cosine": q.Distance.Cosine, "dot": q.Distance.Dot}.get(metric, q.Distance.Euclid)
    return shard_config(q, dims, distance, threshold_kb, datatype)


class LoadedShard:
    """The shard in folder ``path``, loaded with ``config``. ``resident_advice`` false
    (a process that ends after one command) skips the advice whose only use is a
    long-running process's resident memory; the read-ahead and a write's advice stay."""

    def __init__(
        self,
        q: Any,
        filters: NativeFilter,
        path: Path,
        config: Any,
        *,
        dims: int,
        threshold_kb: int,
        resident_advice: bool,
    ) -> None:
        self._q = q
        self._filters = filters
        self.path = path
        self._segments = path / "segments"
        if self._segments.is_dir():
            prefetch_loaded(self._segments)
        self._mapping = threading.Lock()
        """Held by every call that can map or unmap shard files (load, writes, flush,
        close) and by :func:`release_read_once` and :class:`SearchedPages`, which
        advise addresses they read."""
        self._searched: SearchedPages | None = None
        """Releases the pages searches read (None: a process that ends after one command)."""
        with self._mapping:
            self._shard: Any = q.EdgeShard.load(str(path), config)
            if resident_advice:
                release_read_once(path)
                self._searched = SearchedPages(path, skip_first=True)
        self._resident_advice = resident_advice
        self._segment_names = segment_names(self._segments)
        """The segments this shard had at load or after its last optimisation pass."""
        self._drop_cold_cache()
        self.unflushed = False
        """Whether this shard changed since it was loaded or last flushed."""
        self._points: int | None = None
        """The point count (estimate), kept until the next write: the engine holds the
        collection's lock, so no one else changes it."""
        self._optimize_every = 0
        if threshold_kb:  # a quarter of a threshold's worth of points (4 B/dimension)
            self._optimize_every = max(1, threshold_kb * 1024 // (dims * 4) // 4)
        self._written = self._optimize_every  # the first write checks the shard

    # -- lifecycle -------------------------------------------------------------------
    def ensure_indexes(self, spec: IndexSpec) -> None:
        """Create the missing payload indexes (existing ones are kept as they are). Only
        the scope keys get extra graph links per value (HNSW search within one scope);
        the other fields are only ever filters (``enable_hnsw=False``). The indexes no
        read uses (the hash, looked up by writes; the text, used only when keyword
        search is handed to the store) stay on disk until read (``Memory.Cold``)."""
        q = self._q
        keyword_fields, float_fields, text_field = spec
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
                self.unflushed = True

    def leave(self) -> Any:
        """Give up the loaded ``EdgeShard`` unclosed (for the process's exit to release)."""
        with self._mapping:
            shard, self._shard, self._searched = self._shard, None, None
            return shard

    def close(self) -> None:
        """Flush what was changed, then close. A shard only read is not flushed: a flush
        rewrites and fsyncs every segment's trackers even when nothing changed (~80-230
        ms at 1k-100k points, the biggest part of a read-only process's exit)."""
        shard, self._shard, self._searched = self._shard, None, None
        unflushed, self.unflushed = self.unflushed, False
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
        self.unflushed = True
        self._written += points
        if self._optimize_every and self._written >= self._optimize_every:
            self._written = 0
            if self._shard.optimize():
                self._shard.flush()
                self.unflushed = False
                self._after_pass()
            release_read_once(self.path)

    def _after_pass(self) -> None:
        """After an optimisation pass that changed segments: read ahead the Cold files of
        the segments it built (Qdrant Edge dropped their page cache) where searches
        release what they read, else drop theirs (:meth:`_drop_cold_cache`)."""
        names = segment_names(self._segments)
        built, self._segment_names = names - self._segment_names, names
        if self._releasable():
            prefetch_cold(self._segments, built)
        else:
            self._drop_cold_cache()

    def _releasable(self) -> bool:
        """Whether the pages each search maps are released after it."""
        searched = self._searched
        return searched is not None and searched.active

    def _drop_cold_cache(self) -> None:
        """Drop the Cold files' page cache (:func:`drop_cached_pages`) only where nothing
        else bounds what searches make resident: a long-running process whose searched
        pages cannot be released. Where they are released after every search
        (:class:`SearchedPages`), the cache stays: dropped, each search of the first few
        hundred after an open or an optimisation pass read its pages back from disk
        (100k memories: 34-43 major faults a search, round one 31-46 vs 22-23 ms at load
        ~15, for ~10 MiB less RSS)."""
        if self._resident_advice and not self._releasable():
            drop_cached_pages(self._segments)

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
        native = self._filters.of(where)
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
        return [row_of(p, score=p.score) for p in self._shard.query(request)]

    def text_search(self, text: str, field: str, limit: int, where: Clause | None) -> list[Row]:
        q = self._q
        request = q.QueryRequest(
            limit=limit,
            query=q.TextQuery(field, text),
            filter=self._filters.of(where),
            with_payload=True,
        )
        return [row_of(p, score=p.score) for p in self._shard.query(request)]

    def retrieve(self, ids: Sequence[UUID], with_vectors: bool) -> list[Row]:
        records = self._shard.retrieve(list(ids), with_payload=True, with_vector=with_vectors)
        return [row_of(r, with_vector=with_vectors) for r in records]

    def present(self, ids: Sequence[UUID]) -> set[UUID]:
        """The ids among ``ids`` this shard holds (no payload or vector read)."""
        records = self._shard.retrieve(list(ids), with_payload=False, with_vector=False)
        return {point_id(r.id) for r in records}  # type: ignore[misc]  # our ids are UUIDs

    def scroll(
        self, where: Clause | None, limit: int, offset: UUID | None
    ) -> tuple[list[Row], UUID | None]:
        request = self._q.ScrollRequest(
            offset=offset, limit=limit, filter=self._filters.of(where), with_payload=True
        )
        records, next_offset = self._shard.scroll(request)
        return [row_of(r) for r in records], point_id(next_offset)

    def count(self, where: Clause | None) -> int:
        request = self._q.CountRequest(filter=self._filters.of(where), exact=True)
        return int(self._shard.count(request))
