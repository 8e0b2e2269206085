"""Query and scan strategies of :class:`~memoweave_upstash.store.UpstashVectorStore`.

Search
    The filter is translated (:mod:`memoweave_upstash.filters`). An exact translation is
    sent with ``topK = top_k`` (one ``query`` per vector, or one ``query_many`` request per
    ``query_batch_size`` vectors); hits are still checked with the reference evaluator. When
    the translation is only a superset, when that check drops a hit of a full page, or when
    ``top_k`` exceeds ``max_top_k``, the vector is re-run as a *resumable query* that pages
    through candidates in similarity order until ``top_k`` hits match or the namespace is
    exhausted — never a silent top-k-then-filter.

List / count
    Upstash's ``range`` has no filter, so both scan the namespace in range order and filter
    client-side. A list cursor is ``ups1:<base64 JSON {"c": range cursor, "s": skip}>``: the
    range page to reopen and how many of its vectors were already consumed.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memoweave.errors import VectorStoreError
from memoweave.filters import FilterNode, Predicate, compile_filter
from memoweave.providers.store_checks import invalid_cursor
from memoweave.providers.vector_store import EmbedText, Page, SearchHit, StoredRecord
from memoweave.runtime.steps import Steps, gather
from memoweave_upstash.filters import translate
from memoweave_upstash.payloads import decode_metadata, similarity

if TYPE_CHECKING:
    from memoweave_upstash.store import UpstashVectorStore

_CURSOR_PREFIX = "ups1:"


def run(
    store: UpstashVectorStore,
    namespace: str,
    queries: list[list[float] | EmbedText],
    top_k: int,
    node: FilterNode | None,
) -> Steps[list[list[SearchHit]]]:
    """The hits of every query vector (see the module docstring)."""
    translation = translate(node)
    if translation.nothing or not queries:
        return [[] for _ in queries]
    predicate = compile_filter(node)
    cfg = store.config
    results: list[list[SearchHit] | None] = [None] * len(queries)
    if translation.exact and top_k <= cfg.max_top_k:
        for start in range(0, len(queries), cfg.query_batch_size):
            batch = queries[start : start + cfg.query_batch_size]
            pages = yield from _query_batch(store, namespace, batch, top_k, translation.expression)
            for offset, page in enumerate(pages):
                hits = [h for h in _hits(store, page) if predicate(h.payload)]
                if len(hits) == len(page) or len(page) < top_k:
                    results[start + offset] = hits
    for i, query in enumerate(queries):
        if results[i] is None:
            results[i] = yield from _resumable(
                store, namespace, query, top_k, translation.expression, predicate
            )
    return [r or [] for r in results]


def _query_of(query: list[float] | EmbedText) -> dict[str, Any]:
    """The SDK's query argument: ``data`` (embedded by the index) or ``vector``."""
    return {"data": query.text} if isinstance(query, EmbedText) else {"vector": query}


def _query_batch(
    store: UpstashVectorStore,
    namespace: str,
    batch: list[list[float] | EmbedText],
    top_k: int,
    expr: str,
) -> Steps[list[list[Any]]]:
    requests = [
        {**_query_of(q), "top_k": top_k, "include_metadata": True, "filter": expr} for q in batch
    ]
    kinds = {isinstance(q, EmbedText) for q in batch}
    if len(batch) == 1 or len(kinds) > 1:  # one request per query; a batch is of one kind
        parts = [store._step("query", "query", **r, namespace=namespace) for r in requests]
        return (yield gather(*parts))  # concurrent under the async twins
    pages = yield from store._step("query", "query_many", queries=requests, namespace=namespace)
    if len(pages) != len(batch):
        raise VectorStoreError(
            f"Upstash query_many returned {len(pages)} result lists for {len(batch)} queries"
        )
    return pages


def _hits(store: UpstashVectorStore, page: list[Any]) -> list[SearchHit]:
    metric = store._metric
    return [
        SearchHit(r.id, similarity(metric, float(r.score)), decode_metadata(r.metadata))
        for r in page
    ]


def _resumable(
    store: UpstashVectorStore,
    namespace: str,
    query: list[float] | EmbedText,
    top_k: int,
    expr: str,
    predicate: Predicate,
) -> Steps[list[SearchHit]]:
    """Page through candidates in similarity order until ``top_k`` of them match."""
    step = min(store.config.max_top_k, max(4 * top_k, 100))
    page, handle = yield from store._step(
        "resumable query",
        "resumable_query",
        **_query_of(query),
        top_k=step,
        include_metadata=True,
        filter=expr,
        namespace=namespace,
        max_idle=60,
    )
    hits: list[SearchHit] = []
    try:
        while True:
            hits.extend(h for h in _hits(store, page) if predicate(h.payload))
            if len(hits) >= top_k or len(page) < step:
                break
            page = yield from store._handle_step("resumable query", handle, "fetch_next", step)
    except Exception:
        with contextlib.suppress(Exception):
            yield from store._handle_step("resumable query end", handle, "stop")
        raise
    yield from store._handle_step("resumable query end", handle, "stop")
    return hits[:top_k]


def encode_cursor(range_cursor: str, skip: int) -> str:
    """The opaque list cursor for position ``skip`` of the range page at ``range_cursor``."""
    raw = json.dumps({"c": range_cursor, "s": skip}, separators=(",", ":")).encode()
    return _CURSOR_PREFIX + base64.urlsafe_b64encode(raw).decode()


def decode_cursor(cursor: str | None) -> tuple[str, int]:
    """``(range cursor, skip)`` for a cursor made by :func:`encode_cursor` (``None``: start)."""
    if cursor is None:
        return "", 0
    try:
        if not isinstance(cursor, str) or not cursor.startswith(_CURSOR_PREFIX):
            raise ValueError(cursor)
        data = json.loads(base64.urlsafe_b64decode(cursor[len(_CURSOR_PREFIX) :]))
        position = str(data["c"]), int(data["s"])
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise invalid_cursor(cursor) from None
    if position[1] < 0:
        raise invalid_cursor(cursor)
    return position


Visit = Callable[[str, int, StoredRecord], bool]
"""Called with ``(page cursor, index in page, record)``; ``True`` stops the walk."""


def _walk(
    store: UpstashVectorStore,
    namespace: str,
    range_cursor: str,
    skip: int,
    size: int,
    visit: Visit,
) -> Steps[None]:
    """Visit every vector from a position on, in range order, until ``visit`` says stop."""
    while True:
        result = yield from store._step(
            "range",
            "range",
            cursor=range_cursor,
            limit=size,
            include_metadata=True,
            namespace=namespace,
        )
        for i in range(skip, len(result.vectors)):
            item = result.vectors[i]
            if visit(range_cursor, i, StoredRecord(item.id, decode_metadata(item.metadata))):
                return
        if not result.next_cursor:
            return
        range_cursor, skip = result.next_cursor, 0


def scan(
    store: UpstashVectorStore, namespace: str, predicate: Predicate
) -> Steps[list[StoredRecord]]:
    """Every record of the namespace that satisfies ``predicate``."""
    found: list[StoredRecord] = []

    def keep(_cursor: str, _i: int, rec: StoredRecord) -> bool:
        if predicate(rec.payload):
            found.append(rec)
        return False

    yield from _walk(store, namespace, "", 0, store.config.read_batch_size, keep)
    return found


def list_page(
    store: UpstashVectorStore,
    namespace: str,
    node: FilterNode | None,
    limit: int,
    cursor: str | None,
) -> Steps[Page]:
    """Up to ``limit`` matching records from ``cursor``; ``next_cursor`` marks the next match."""
    range_cursor, skip = decode_cursor(cursor)
    predicate = compile_filter(node)
    size = store.config.read_batch_size
    if node is None:  # no filter: read just past this page
        size = min(size, skip + limit + 1)
    out: list[StoredRecord] = []
    following: list[str] = []

    def take(page_cursor: str, i: int, rec: StoredRecord) -> bool:
        if not predicate(rec.payload):
            return False
        if len(out) == limit:
            following.append(encode_cursor(page_cursor, i))
            return True
        out.append(rec)
        return False

    yield from _walk(store, namespace, range_cursor, skip, size, take)
    return Page(out, following[0] if following else None)


__all__ = ["decode_cursor", "encode_cursor", "list_page", "run", "scan"]
