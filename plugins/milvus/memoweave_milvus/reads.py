"""Read paths of the Milvus store: search, keyword search, list and count.

Each takes a :class:`Binding` (transport + collection) and a :class:`Translation` of the
filter, and is a pipeline (:mod:`memoweave.runtime.steps`) of client calls, so the sync
store methods and their async twins share it. Exact translations run natively; inexact
ones run their superset natively and keep what the reference evaluator accepts: searches
over-fetch (growing the limit up to Milvus' maximum, then falling back to an exact
client-side scan), ``list`` and ``count`` scan the superset in primary-key order.
"""

from __future__ import annotations

import base64
import binascii
import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memoweave.providers.store_checks import invalid_cursor
from memoweave.providers.vector_store import Page, SearchHit, StoredRecord
from memoweave.runtime.steps import Steps, call
from memoweave_milvus.config import MilvusStoreConfig
from memoweave_milvus.connection import engine_errors
from memoweave_milvus.filters import TRUE, Expr, Translation, and_exprs, string_literal
from memoweave_milvus.schema import METRICS, SPARSE_COLUMN

#: Milvus' maximum ``limit`` (topk) of one search or query request.
MAX_LIMIT = 16_384
SCAN_BATCH = 2_048
_CURSOR_PREFIX = "mw1:"

Predicate = Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Binding:
    """The transport (:class:`memoweave_milvus.connection.MilvusTransport`) and the
    collection a store is bound to."""

    client: Any
    name: str
    dims: int
    metric: str
    config: MilvusStoreConfig

    def call_kwargs(self) -> dict[str, Any]:
        """Keyword arguments every read request carries."""
        return {"timeout": self.config.timeout, "consistency_level": self.config.consistency_level}


def score_of(metric: str, distance: float) -> float:
    """The contract's similarity for a Milvus distance (L2 is reported squared)."""
    if metric == "euclidean":
        return -math.sqrt(max(float(distance), 0.0))
    return float(distance)


def _vector_params(b: Binding, limit: int) -> dict[str, Any]:
    params = dict(b.config.search_params or {})
    if b.config.effective_index_type.startswith("HNSW"):
        params["ef"] = max(int(params.get("ef", 64)), limit)
    return {"metric_type": METRICS[b.metric], "params": params}


def _native_search(
    b: Binding, data: Any, field: str, limit: int, expr: str, params: dict[str, Any]
) -> Steps[list[tuple[str, float, dict[str, Any]]]]:
    with engine_errors("search", collection=b.name):
        result = yield call(
            b.client.rpc,
            "search",
            b.name,
            data=[data],
            anns_field=field,
            limit=limit,
            filter=expr,
            output_fields=["payload"],
            search_params=params,
            **b.call_kwargs(),
        )
    return [(hit["id"], float(hit["distance"]), hit["entity"]["payload"]) for hit in result[0]]


Hits = list[tuple[str, float, dict[str, Any]]]


def _overfetch(
    fetch: Callable[[int], Steps[Hits]], top_k: int, keep: Predicate
) -> Steps[tuple[Hits, bool]]:
    """Fetch growing limits until ``top_k`` raw hits pass ``keep``; ``(hits, complete)``."""
    limit = min(max(4 * top_k, 64), MAX_LIMIT)
    while True:
        raw = yield from fetch(limit)
        kept = [h for h in raw if keep(h[2])]
        if len(kept) >= top_k or len(raw) < limit:
            return kept[:top_k], True
        if limit >= MAX_LIMIT:
            return kept, False
        limit = min(limit * 4, MAX_LIMIT)


def search(
    b: Binding, vector: list[float], top_k: int, tr: Translation, keep: Predicate
) -> Steps[list[SearchHit]]:
    """The ``top_k`` records most similar to ``vector`` among those matching the filter."""
    if tr.empty:
        return []

    def fetch(limit: int) -> Steps[Hits]:
        params = _vector_params(b, limit)
        raw = yield from _native_search(b, vector, "vector", limit, tr.expr, params)
        return [(i, score_of(b.metric, d), p) for i, d, p in raw]

    if tr.exact and top_k <= MAX_LIMIT:
        hits = yield from fetch(top_k)
    else:
        complete = False
        if top_k <= MAX_LIMIT:
            hits, complete = yield from _overfetch(fetch, top_k, keep)
        if not complete:
            hits = yield from _scan_search(b, vector, top_k, tr, keep)
    hits.sort(key=lambda h: h[1], reverse=True)
    return [SearchHit(id=i, score=s, payload=p) for i, s, p in hits]


def _scan_search(
    b: Binding, vector: list[float], top_k: int, tr: Translation, keep: Predicate
) -> Steps[Hits]:
    """Exact top_k by scoring every matching record client-side (the last resort)."""
    similarity = _similarity(b.metric)
    rows = yield from scan(b, tr.expr, ["payload", "vector"])
    scored = (
        (row["id"], similarity(vector, row["vector"]), row["payload"])
        for row in rows
        if keep(row["payload"])
    )
    return heapq.nlargest(top_k, scored, key=lambda h: h[1])


def _similarity(metric: str) -> Callable[[Sequence[float], Sequence[float]], float]:
    def dot(a: Sequence[float], c: Sequence[float]) -> float:
        return math.fsum(x * y for x, y in zip(a, c, strict=True))

    if metric == "dot":
        return dot
    if metric == "euclidean":
        return lambda a, c: -math.dist(a, c)

    def cosine(a: Sequence[float], c: Sequence[float]) -> float:
        norm = math.sqrt(dot(a, a)) * math.sqrt(dot(c, c))
        return dot(a, c) / norm if norm else 0.0

    return cosine


def keyword_search(
    b: Binding, text: str, top_k: int, tr: Translation, keep: Predicate
) -> Steps[list[SearchHit]]:
    """BM25 search over the memory text; only records sharing a term with ``text``."""
    if tr.empty:
        return []
    params = {"metric_type": "BM25", "params": {}}

    def fetch(limit: int) -> Steps[Hits]:
        raw = yield from _native_search(b, text, SPARSE_COLUMN, limit, tr.expr, params)
        # Milvus reports BM25 as a positive score; Milvus Lite as its negation.
        return [(i, abs(d), p) for i, d, p in raw if d != 0]

    if tr.exact:
        hits = yield from fetch(min(top_k, MAX_LIMIT))
    else:
        hits, _ = yield from _overfetch(fetch, min(top_k, MAX_LIMIT), keep)
    hits.sort(key=lambda h: h[1], reverse=True)
    return [SearchHit(id=i, score=s, payload=p) for i, s, p in hits]


def ordered_batch(
    b: Binding, expr: str, after: str | None, size: int, fields: list[str]
) -> Steps[list[dict[str, Any]]]:
    """Up to ``size`` rows matching ``expr`` with ``id > after``, in primary-key order."""
    parts: list[Expr] = [expr or TRUE]
    if after is not None:
        parts.insert(0, f"id > {string_literal(after)}")
    full = and_exprs(parts)
    with engine_errors("query", collection=b.name):
        rows = yield call(
            b.client.rpc,
            "query",
            b.name,
            filter="" if full is TRUE else str(full),
            output_fields=fields,
            limit=size,
            iterator="True",
            reduce_stop_for_best="False",
            **b.call_kwargs(),
        )
    rows = list(rows)
    rows.sort(key=lambda r: r["id"])  # pk order; a no-op when the engine already sorted
    return rows


def scan(b: Binding, expr: str, fields: list[str]) -> Steps[list[dict[str, Any]]]:
    """Every row matching ``expr``, in primary-key order, fetched in batches."""
    after: str | None = None
    found: list[dict[str, Any]] = []
    while True:
        rows = yield from ordered_batch(b, expr, after, SCAN_BATCH, fields)
        found.extend(rows)
        if len(rows) < SCAN_BATCH:
            return found
        after = rows[-1]["id"]


def count(b: Binding, tr: Translation, keep: Predicate) -> Steps[int]:
    """How many records match the filter."""
    if tr.empty:
        return 0
    if not tr.exact:
        rows = yield from scan(b, tr.expr, ["payload"])
        return sum(1 for row in rows if keep(row["payload"]))
    with engine_errors("count", collection=b.name):
        rows = yield call(
            b.client.rpc,
            "query",
            b.name,
            filter=tr.expr,
            output_fields=["count(*)"],
            **b.call_kwargs(),
        )
    return int(rows[0]["count(*)"]) if rows else 0


def encode_cursor(last_id: str) -> str:
    """An opaque cursor resuming after ``last_id``."""
    return base64.urlsafe_b64encode((_CURSOR_PREFIX + last_id).encode("utf-8")).decode("ascii")


def decode_cursor(cursor: str) -> str:
    """The id a cursor resumes after; ``ValidationError`` if it is not one of ours."""
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8")
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise invalid_cursor(cursor) from exc
    if not text.startswith(_CURSOR_PREFIX) or len(text) == len(_CURSOR_PREFIX):
        raise invalid_cursor(cursor)
    return text[len(_CURSOR_PREFIX) :]


def list_page(
    b: Binding, tr: Translation, keep: Predicate, limit: int, cursor: str | None
) -> Steps[Page]:
    """One page of matching records in id order, resuming after ``cursor``."""
    after = decode_cursor(cursor) if cursor is not None else None
    if tr.empty:
        return Page(records=[], next_cursor=None)
    limit = min(limit, MAX_LIMIT - 1)
    wanted = limit + 1  # one extra row tells whether another page exists
    found: list[dict[str, Any]] = []
    batch = wanted if tr.exact else min(max(4 * wanted, 256), MAX_LIMIT)
    while len(found) < wanted:
        rows = yield from ordered_batch(b, tr.expr, after, batch, ["payload"])
        found.extend(r for r in rows if tr.exact or keep(r["payload"]))
        if len(rows) < batch:
            break
        after = rows[-1]["id"]
    page = [StoredRecord(id=r["id"], payload=r["payload"]) for r in found[:limit]]
    more = len(found) > limit
    return Page(records=page, next_cursor=encode_cursor(page[-1].id) if more else None)
