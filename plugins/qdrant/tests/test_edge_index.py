"""Qdrant Edge at scale (issue 14): segments get an HNSW index over int8-quantised vectors
from the writes that fill them; searches stay right (exact scores, filters), and a shard
written before indexing existed keeps every point when the new code opens it."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memoweave.errors import ConfigError
from memoweave.filters import parse_filter
from memoweave.plugins import load_registry
from memoweave.providers.vector_store import VectorRecord

DIMS = 16
_F32 = {"vector_datatype": "float32"}
"""Tests of exact scoring compare with float32 arithmetic to 1e-5: stored as float32."""


def _vectors(n: int, seed: int = 7) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((n, DIMS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _id(i: int) -> str:
    return str(uuid.UUID(int=i + 1))


def _records(vectors: np.ndarray, start: int = 0) -> list[VectorRecord]:
    return [
        VectorRecord(_id(start + i), v.tolist(), {"user_id": f"u{(start + i) % 2}", "n": start + i})
        for i, v in enumerate(vectors)
    ]


def _info(store: Any) -> Any:
    """The shard's own report (segments, indexed vectors)."""
    return store._engine.shards.loaded[0]._shard.info()


def test_writes_index_the_segments_they_fill_and_searches_stay_exact(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    config = {
        "partitions": 1,
        "path": str(tmp_path / "edge"),
        "index_threshold_kb": 4,
        **_F32,
    }  # 64 vectors
    store = qdrant_make_store(config)
    store.ensure_collection("c", DIMS)
    vectors = _vectors(900)
    for lo in (0, 450):  # a check every 16 points: both batches optimise
        store.upsert(_records(vectors[lo : lo + 450], lo))
    assert _info(store).indexed_vectors_count == 900
    store.delete([_id(i) for i in range(0, 300, 3)])
    store.update(_id(1), payload={"user_id": "u1", "n": -1})
    assert _info(store).points_count == 800
    store.close()

    again = qdrant_make_store(config)
    again.ensure_collection("c", DIMS)
    assert again.count() == 800
    assert again.get([_id(1)])[0].payload == {"user_id": "u1", "n": -1}
    assert again.get([_id(0), _id(3)]) == []
    # exact scores and the original vectors survive quantisation
    got = again.get([_id(800)], with_vectors=True)[0]
    assert np.allclose(got.vector, vectors[800], atol=1e-6)
    hits = again.search(vectors[800].tolist(), top_k=5, filter=parse_filter({"user_id": "u0"}))
    assert hits[0].id == _id(800) and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert all(h.payload["user_id"] == "u0" for h in hits)
    kept = vectors[[i for i in range(900) if i % 2 == 0 and not (i < 300 and i % 3 == 0)]]
    assert hits[4].score == pytest.approx(np.sort(kept @ vectors[800])[-5], abs=1e-5)


def test_a_zero_threshold_never_indexes(qdrant_make_store: Any, tmp_path: Path) -> None:
    store = qdrant_make_store(
        {"partitions": 1, "path": str(tmp_path / "edge"), "index_threshold_kb": 0}
    )
    store.ensure_collection("c", DIMS)
    store.upsert(_records(_vectors(500)))
    assert _info(store).indexed_vectors_count == 0


def test_a_shard_written_before_indexing_keeps_every_point(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    """The layout and shard configuration of the previous release (no index settings)."""
    import qdrant_edge as q

    root = tmp_path / "edge"
    folder = root / "old"
    folder.mkdir(parents=True)
    config = q.EdgeConfig(vectors=q.EdgeVectorParams(size=DIMS, distance=q.Distance.Cosine))
    shard = q.EdgeShard.create(str(folder / "shard"), config)
    vectors = _vectors(600, seed=3)
    points = [
        q.Point(uuid.UUID(_id(i)), v.tolist(), {"user_id": "u", "n": i})
        for i, v in enumerate(vectors)
    ]
    shard.update(q.UpdateOperation.upsert_points(points))
    shard.close()
    (folder / "memoweave.json").write_text(json.dumps({"dims": DIMS, "metric": "cosine"}))

    for indexed in (0, 601):  # opened as it is; a first write indexes it; reopened
        store = qdrant_make_store({"partitions": 1, "path": str(root), "index_threshold_kb": 4})
        store.ensure_collection("old", DIMS)
        assert _info(store).indexed_vectors_count == indexed
        if not indexed:
            store.upsert(_records(_vectors(1, seed=5), 600))
        assert store.count() == 601
        records = store.get([_id(i) for i in range(600)], with_vectors=True)
        assert [r.payload["n"] for r in records] == list(range(600))
        assert np.allclose([r.vector for r in records], vectors, atol=1e-6)
        store.close()
    saved = json.loads((folder / "shard" / "edge_config.json").read_text())
    assert saved["hnsw_config"]["m"] == 16 and "scalar" in saved["quantization_config"]


@pytest.mark.parametrize(
    "config",
    [
        {"path": "x", "index_threshold_kb": -1},
        {"path": "x", "index_threshold_kb": True},
        {"mode": "local", "path": "x", "index_threshold_kb": 10},
        {"url": "http://localhost:6333", "index_threshold_kb": 10},
    ],
)
def test_the_threshold_is_checked(config: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        load_registry().create("vector_store", "qdrant", config)


class _QueryLog:
    """The real shard, recording the filter and parameters of every query."""

    def __init__(self, shard: Any) -> None:
        self._shard = shard
        self.requests: list[Any] = []

    def query(self, request: Any) -> Any:
        self.requests.append(request)
        return self._shard.query(request)

    def steps(self) -> list[str]:
        """Each query as ``candidates`` (quantised, unrescored) or ``exact``, with
        ``+filter`` when it checks a filter and ``+ids`` when restricted to ids."""
        out = []
        for r in self.requests:
            step = "exact" if r.params.exact else "candidates"
            assert step == "exact" or r.params.quantization.rescore is False
            must = r.filter.must if r.filter is not None else []
            if must and must[0].__class__.__name__ == "HasIdCondition":
                step += "+ids"
                must = must[1:]
            out.append(
                step + ("+filter" if must or (r.filter and not step.endswith("ids")) else "")
            )
        self.requests.clear()
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shard, name)


def _rescored(shard: Any, vector: list[float], limit: int, native: Any) -> list[Any]:
    """Qdrant's own search with rescoring (what the engine ran before candidates)."""
    import qdrant_edge as q

    params = q.SearchParams(
        hnsw_ef=128, quantization=q.QuantizationSearchParams(rescore=True, oversampling=2.0)
    )
    request = q.QueryRequest(
        limit=limit, query=q.Query.Nearest(vector), filter=native, params=params
    )
    return [(str(p.id), p.score) for p in shard.query(request)]


def test_searches_score_candidates_exactly_and_skip_the_filter_when_it_drops_a_few_points(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    """The quantised nearest points are found without rescoring, then scored exactly (bit
    for bit Qdrant's rescored scores); a filter keeping nearly the whole shard (one scope)
    is not checked during the graph walk; a selective one is; a filter keeping a few
    points scores each of them exactly in one query."""
    store = qdrant_make_store(
        {"partitions": 1, "path": str(tmp_path / "edge"), "index_threshold_kb": 4, **_F32}
    )
    store.ensure_collection("c", DIMS)
    vectors = _vectors(900, seed=11)
    records = _records(vectors)
    few = {1, 2, 3, 4}
    others = set(range(0, 900, 150)) | few  # 10 points outside the scope
    for i, record in enumerate(records):
        record.payload["user_id"] = "few" if i in few else "other" if i in others else "me"
    store.upsert(records)
    assert _info(store).indexed_vectors_count == 900
    engine = store._engine
    log = _QueryLog(engine.shards.loaded[0]._shard)
    engine.shards.loaded[0]._shard = log

    scope = parse_filter({"user_id": "me"})
    for probe in (0, 300, 451):  # the nearest point itself is out of scope for 0 and 300
        hits = store.search(vectors[probe].tolist(), top_k=10, filter=scope)
        assert log.steps() == ["candidates", "exact+ids+filter"]
        scores = vectors @ vectors[probe]
        kept = [i for i in np.argsort(-scores) if i not in others][:10]
        assert [h.id for h in hits] == [_id(int(i)) for i in kept]
        assert [h.score for h in hits] == pytest.approx(scores[kept].tolist(), abs=1e-5)
        assert all(h.payload["user_id"] == "me" for h in hits)
        native = engine._filters.of(store._filter(scope)[0])
        assert [(h.id, h.score) for h in hits] == _rescored(
            log._shard, vectors[probe].tolist(), 10, native
        )

    hits = store.search(vectors[1].tolist(), top_k=10, filter=parse_filter({"n": {"lt": 100}}))
    assert log.steps() == ["candidates+filter", "exact+ids+filter"]  # selective
    assert sorted(int(h.payload["n"]) for h in hits) == sorted(
        int(i) for i in np.argsort(-(vectors[:100] @ vectors[1]))[:10]
    )
    hits = store.search(vectors[1].tolist(), top_k=10, filter=parse_filter({"user_id": "few"}))
    assert log.steps() == ["exact+filter"]  # 4 points: each scored exactly
    assert [h.id for h in hits] == [
        _id(int(i)) for i in 1 + np.argsort(-(vectors[1:5] @ vectors[1]))
    ]
    hits = store.search(vectors[2].tolist(), top_k=10)
    assert log.steps() == ["candidates", "exact+ids"]
    assert [(h.id, h.score) for h in hits] == _rescored(log._shard, vectors[2].tolist(), 10, None)


class _CountLog(_QueryLog):
    """The real shard, also counting the reads of its whole point count."""

    def __init__(self, shard: Any) -> None:
        super().__init__(shard)
        self.totals = 0

    def count(self, request: Any) -> Any:
        self.totals += request.filter is None
        return self._shard.count(request)


def test_the_point_count_is_read_once_until_the_next_write(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    """The search's gate compares a filter's estimate with the shard's point count: it
    is read once, then again after every write, so a scope that was the whole shard is
    searched with its filter once other scopes are written."""
    store = qdrant_make_store(
        {"partitions": 1, "path": str(tmp_path / "edge"), "index_threshold_kb": 4, **_F32}
    )
    store.ensure_collection("c", DIMS)
    vectors = _vectors(320, seed=5)
    records = _records(vectors)
    for i, record in enumerate(records):
        record.payload["user_id"] = "me" if i < 120 else "other"
    store.upsert(records[:120])
    engine = store._engine
    log = _CountLog(engine.shards.loaded[0]._shard)
    engine.shards.loaded[0]._shard = log
    scope = parse_filter({"user_id": "me"})
    for probe in range(3):
        store.search(vectors[probe].tolist(), top_k=10, filter=scope)
    assert log.totals == 1
    assert log.steps()[-2:] == ["candidates", "exact+ids+filter"]  # the whole shard
    store.upsert(records[120:])
    hits = store.search(vectors[0].tolist(), top_k=10, filter=scope)
    assert log.totals == 2
    assert log.steps() == ["candidates+filter", "exact+ids+filter"]  # now a third of it
    assert [h.id for h in hits] == [
        _id(int(i)) for i in np.argsort(-(vectors[:120] @ vectors[0]))[:10]
    ]
    store.delete([_id(i) for i in range(120, 320)])
    store.search(vectors[0].tolist(), top_k=10, filter=scope)
    assert log.totals == 3
    assert log.steps() == ["candidates", "exact+ids+filter"]


def _cached_pages(path: Path) -> int:
    """How many pages of ``path`` are in the page cache (``mincore`` over a mapping)."""
    import ctypes
    import mmap

    size = path.stat().st_size
    pages = -(-size // mmap.PAGESIZE)
    vec = (ctypes.c_ubyte * pages)()
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_COPY) as m:
        buf = (ctypes.c_char * size).from_buffer(m)
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            assert libc.mincore(ctypes.c_void_p(ctypes.addressof(buf)), size, vec) == 0
        finally:
            del buf
    return sum(v & 1 for v in vec)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="posix_fadvise and mincore")
@pytest.mark.parametrize("releasable", [True, False], ids=["released", "unreleasable"])
def test_opening_drops_the_cached_vectors_and_payloads_only_where_searches_cannot_release_them(
    qdrant_make_store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, releasable: bool
) -> None:
    """Files of original vectors and payloads still in the page cache (a home just
    copied) are mapped around each page a search reads (fault-around). Where the pages a
    search read are released after it (``/proc/self/map_files`` readable), opening keeps
    that cache, so searches do not read them back from disk; where they cannot be
    released, opening drops it (Qdrant Edge does only when it closes)."""
    from memoweave_qdrant import edge_pages

    if not releasable:
        monkeypatch.setattr(edge_pages, "_MAP_FILES", str(tmp_path / "no-map-files"))
    config = {"partitions": 1, "path": str(tmp_path / "edge"), "index_threshold_kb": 4}
    store = qdrant_make_store(config)
    store.ensure_collection("c", DIMS)
    vectors = _vectors(900, seed=5)
    store.upsert(_records(vectors))
    store.close()
    segments = tmp_path / "edge" / "c" / "shard" / "segments"
    files = [
        *segments.glob("*/vector_storage/matrix.dat"),
        *segments.glob("*/payload_storage/page_*.dat"),
    ]
    assert {f.parent.name for f in files} == {"vector_storage", "payload_storage"}
    for path in files:  # in the cache, written back (clean), as after a copy and a sync
        with open(path, "rb") as handle:
            os.fsync(handle.fileno())
            handle.read()
    cached = [_cached_pages(path) for path in files]
    assert all(cached)

    again = qdrant_make_store(config)
    again.ensure_collection("c", DIMS)
    after_open = [_cached_pages(path) for path in files]
    assert after_open == (cached if releasable else [0] * len(files))
    hits = again.search(vectors[7].tolist(), top_k=3)
    assert hits[0].id == _id(7)
    again.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="posix_fadvise and mincore")
@pytest.mark.parametrize("releasable", [True, False], ids=["released", "unreleasable"])
def test_an_optimisation_pass_reads_ahead_the_written_parts_of_the_segments_it_built(
    qdrant_make_store: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, releasable: bool
) -> None:
    """Qdrant Edge drops the page cache of the segments an optimisation pass builds; where
    searches release what they read, the engine reads ahead their original vectors and
    the written part of their payload pages (the preallocated holes are skipped), so the
    searches after the pass do not read them from disk a page at a time. Where searches
    cannot release, nothing is read ahead."""
    from memoweave_qdrant import edge_pages

    if not releasable:
        monkeypatch.setattr(edge_pages, "_MAP_FILES", str(tmp_path / "no-map-files"))
    config = {"path": str(tmp_path / "edge"), "index_threshold_kb": 4, "partitions": 1}
    store = qdrant_make_store(config)
    store.ensure_collection("c", DIMS)
    vectors = _vectors(3000, seed=5)
    for lo in range(0, len(vectors), 100):
        store.upsert(_records(vectors[lo : lo + 100], start=lo))
    segments = tmp_path / "edge" / "c" / "shard" / "segments"
    built = [path.parent.parent for path in segments.glob("*/vector_storage/matrix.dat")]
    assert built  # the pass built at least one segment with its vectors in matrix.dat
    for segment in built:
        matrix = segment / "vector_storage" / "matrix.dat"
        pages = [*segment.glob("payload_storage/page_*.dat")]
        assert pages
        if releasable:
            assert _cached_pages(matrix) >= matrix.stat().st_size // 4096
            for page in pages:
                written = page.stat().st_blocks * 512 // 4096
                assert 0 < _cached_pages(page) < page.stat().st_size // 4096  # holes skipped
                assert _cached_pages(page) <= written + 1
        else:
            assert _cached_pages(matrix) == 0
            assert all(_cached_pages(page) == 0 for page in pages)
    hits = store.search(vectors[7].tolist(), top_k=3)
    assert hits[0].id == _id(7)
