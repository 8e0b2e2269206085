"""How a Qdrant Edge shard is indexed at scale: its configuration and search parameters.

Qdrant Edge runs no optimizer of its own: without one every segment stays appendable and
each search scans all vectors (~35 ms CPU at 100k x 384 dims). With :func:`shard_config`
a segment holding more than ``index_threshold_kb`` of vectors becomes an indexed segment
when :meth:`EdgeShard.optimize` runs; the engine calls it from the write that brings the
unindexed points past the threshold (``optimize`` holds the GIL for its whole run, so a
background thread would stall every Python thread just the same). An indexed segment has

- an HNSW graph (``m`` 16, ``ef_construct`` 100) built over int8 scalar-quantised copies
  of its vectors (kept in RAM, a quarter of the float32 size);
- its original vectors on disk (mmap, ``Memory.Cold``), as float16 in a collection
  created since memoweave-qdrant stored them so (:data:`DEFAULT_DATATYPE`; older ones
  keep float32, see :func:`shard_config`);
- payloads on disk (the default of Qdrant Edge, set explicitly).

A search runs in two steps: the ``candidates(limit)`` nearest points by their quantised
vectors (:func:`candidate_params`: no rescoring, so no original vector is read), then the
best ``limit`` of those scored exactly on their original vectors (:func:`exact_params`
over a ``HasId`` filter), so returned scores are the exact metric, bit for bit what
Qdrant's own rescoring gives. Qdrant's rescoring reads ``oversampling x limit`` original
vectors in every segment (~600 random reads per search at 100k: most of the vector file
resident after ~100 searches); the exact step reads only the candidates'.

Segments are merged up to ``MAX_SEGMENT_KB`` of vectors, which bounds the cost of one
optimisation (an HNSW build over at most that many vectors) instead of rebuilding one
ever-growing segment.

A filtered search whose filter keeps fewer than ``full_scan_threshold`` KB of vectors
(a small scope) finds its candidates among the scope's points through the payload index;
a bigger scope walks the graph, with ACORN (two-hop neighbours) when the filter drops a
large part of it. The same configuration is given when an existing shard is loaded:
Qdrant Edge checks it against the shard (dims and metric must match) and rewrites the
shard's configuration file; its segments are indexed by the next optimisation, which
builds new segments before it swaps out the old ones, so no point is ever removed.
"""

from __future__ import annotations

from typing import Any

HNSW_M = 16
HNSW_EF_CONSTRUCT = 100
MAX_SEGMENT_KB = 32_768
"""Largest segment a merge builds: ~21,800 vectors of 384 float32 dimensions."""
SEARCH_EF = 128
"""Candidates kept while walking the graph (at least the requested limit)."""
OVERSAMPLING = 2.0
"""Quantised candidates per requested hit, scored exactly on their original vectors."""
ACORN_MAX_SELECTIVITY = 0.6
"""Filters keeping at most this share of a segment walk the graph with ACORN. Measured at
100k MiniLM vectors, a filter keeping half of them: recall@10 0.95 without, 0.999 with
(about 4x the CPU); a filter keeping all of them (one scope) needs no ACORN (recall 1.0)."""


DATATYPES = ("float32", "float16")
"""How a collection's original vectors can be stored (Qdrant's vector storage datatype)."""
DEFAULT_DATATYPE = "float16"
"""The datatype of a new collection. Half the bytes of float32 per vector: at 100k x 384
dimensions 73 instead of 146 MiB on disk, and the pages a search reads to score its
candidates exactly hold twice as many vectors (less of the file mapped by a process that
searches it: the resident memory). Scores differ from float32's by at most ~1e-4 (each
stored component rounded to 11 significant bits; measured on 200 MiniLM queries over 20k
memories: top-10 the same set every time, the same order 197 times, the other three
swapped neighbours less than 1e-4 apart). A collection keeps the datatype it was created
with: Qdrant Edge refuses to load a shard with another one, and converting would change
every stored vector."""


def shard_config(
    q: Any, dims: int, distance: Any, index_threshold_kb: int, datatype: str = "float32"
) -> Any:
    """The ``EdgeConfig`` of a collection, for :meth:`EdgeShard.create` and ``load``.

    ``index_threshold_kb`` 0 never builds an index (every search is an exact scan);
    ``datatype`` (one of :data:`DATATYPES`) must be the one the shard was created with."""
    if datatype not in DATATYPES:
        raise ValueError(f"unknown vector datatype {datatype!r}; expected one of {DATATYPES}")
    # float32 is Qdrant's default: left unset, the configuration of a shard created
    # before float16 existed here is written back exactly as it was
    storage = q.VectorStorageDatatype.Float16 if datatype == "float16" else None
    return q.EdgeConfig(
        vectors=q.EdgeVectorParams(
            size=dims, distance=distance, memory=q.Memory.Cold, datatype=storage
        ),
        hnsw_config=q.HnswIndexConfig(
            m=HNSW_M,
            ef_construct=HNSW_EF_CONSTRUCT,
            full_scan_threshold=max(index_threshold_kb, 1),
        ),
        quantization_config=q.ScalarQuantizationConfig(
            q.ScalarType.Int8, quantile=0.99, memory=q.Memory.Pinned
        ),
        optimizers=q.EdgeOptimizersConfig(
            indexing_threshold=index_threshold_kb,
            max_segment_size=max(MAX_SEGMENT_KB, index_threshold_kb),
        ),
        payload_memory=q.Memory.Cold,
    )


def candidates(limit: int) -> int:
    """How many quantised nearest points to score exactly for ``limit`` hits."""
    return int(limit * OVERSAMPLING)


def candidate_params(q: Any, limit: int) -> Any:
    """Search parameters of the candidate step: the ``limit`` nearest points by their
    quantised vectors where a segment has them (exact vectors elsewhere), unrescored."""
    return q.SearchParams(
        hnsw_ef=max(SEARCH_EF, limit),
        quantization=q.QuantizationSearchParams(rescore=False),
        acorn=q.AcornSearchParams(enable=True, max_selectivity=ACORN_MAX_SELECTIVITY),
    )


def exact_params(q: Any) -> Any:
    """Search parameters scoring every point the filter keeps on its original vector."""
    return q.SearchParams(exact=True)
