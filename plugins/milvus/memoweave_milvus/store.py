"""The Milvus vector store (Milvus Lite or a Milvus server).

See :mod:`memoweave.providers.vector_store` for the contract and
:mod:`memoweave_milvus.schema` for the collection layout. Every method is written once, as
a pipeline of client calls (:mod:`memoweave.runtime.steps`): the sync methods run it on
``MilvusClient``, the native async twins (``asearch``...) await it on
``AsyncMilvusClient`` (:class:`memoweave_milvus.connection.MilvusTransport`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from memoweave.errors import NotFound, ValidationError, VectorStoreError
from memoweave.filters import compile_filter, parse_filter
from memoweave.filters.ast import FilterNode
from memoweave.providers.checks import check_positive
from memoweave.providers.store_checks import (
    check_collection_name,
    check_metric,
    check_payload,
    check_records,
    check_text,
    check_vector,
    closed,
    invalid_cursor,
    not_bound,
)
from memoweave.providers.vector_store import (
    Metric,
    Page,
    Payload,
    SearchHit,
    StoreCapabilities,
    StoredRecord,
    VectorRecord,
    VectorStore,
)
from memoweave.runtime.aio import awaitable
from memoweave.runtime.steps import Steps, blocking, call, pause
from memoweave_milvus import reads
from memoweave_milvus.config import MilvusStoreConfig
from memoweave_milvus.connection import MilvusTransport, engine_errors
from memoweave_milvus.filters import Translation, translate
from memoweave_milvus.schema import (
    MAX_DIMS,
    METRICS,
    build_indexes,
    build_schema,
    check_id,
    check_ids,
    describe_layout,
    to_row,
)

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,254}$")
#: Upsert request bounds: Milvus rejects gRPC messages above 64 MB by default.
CHUNK_ROWS = 1_000
CHUNK_BYTES = 8 * 1024 * 1024
ID_CHUNK = 1_000


def lite_supports_bm25() -> bool:
    """Whether the installed Milvus Lite implements BM25 functions (3.x does, 2.x did not)."""
    try:
        from milvus_lite import __version__
    except ImportError:
        return False
    match = re.match(r"(\d+)", str(__version__))
    return match is not None and int(match.group(1)) >= 3


def server_supports_bm25(version: str) -> bool:
    """Whether a Milvus server version string is 2.5 or later (BM25 functions)."""
    match = re.search(r"(\d+)\.(\d+)", version or "")
    if not match:
        return True  # managed services report free-form versions; creation errors if not
    return (int(match.group(1)), int(match.group(2))) >= (2, 5)


class MilvusVectorStore(VectorStore):
    """A memoweave vector store backed by Milvus (see the module docstring)."""

    def __init__(self, config: MilvusStoreConfig) -> None:
        self._config = config
        self._client = MilvusTransport(config)
        self._closed = False
        self._binding: reads.Binding | None = None
        self._pending = 0  # rows written since the last Milvus Lite flush
        if config.is_lite:
            text_ok = lite_supports_bm25()
        else:
            with engine_errors("get_server_version", uri=config.uri):
                text_ok = server_supports_bm25(str(self._client.rpc("get_server_version")))
        self._text_supported = config.keyword_search and text_ok
        self._with_text = self._text_supported
        self.capabilities = StoreCapabilities(keyword_search=self._with_text, persistent=True)

    # -- binding -------------------------------------------------------------------------

    def _ensure_collection(self, name: str, dims: int, metric: Metric = "cosine") -> Steps[None]:
        """Create the collection if missing (and load it), open and check it otherwise."""
        self._check_open()
        check_collection_name(
            name, _NAME, "Use letters, digits and underscores, starting with a letter or _."
        )
        if isinstance(dims, bool) or not isinstance(dims, int) or not 1 <= dims <= MAX_DIMS:
            raise ValidationError(
                f"dims must be an integer in [1, {MAX_DIMS}], got {dims!r}",
                details={"argument": "dims"},
            )
        check_metric(metric)
        rpc, kw = self._client.rpc, {"timeout": self._config.timeout}
        with engine_errors("ensure_collection", collection=name):
            if (yield call(rpc, "has_collection", name, **kw)):
                self._with_text = yield from self._check_existing(name, dims, metric)
            else:
                yield from self._create(name, dims, metric)
            state = (yield call(rpc, "get_load_state", name, **kw)).get("state")
            if getattr(state, "name", str(state)) != "Loaded":
                yield call(rpc, "load_collection", name, **kw)
        self.capabilities = StoreCapabilities(keyword_search=self._with_text, persistent=True)
        self._binding = reads.Binding(self._client, name, dims, metric, self._config)

    def _check_existing(self, name: str, dims: int, metric: str) -> Steps[bool]:
        rpc, kw = self._client.rpc, {"timeout": self._config.timeout}
        layout = describe_layout((yield call(rpc, "describe_collection", name, **kw)))
        if not layout["ours"]:
            raise VectorStoreError(
                f"Milvus collection {name!r} exists but was not created by memoweave",
                hint="Use another collection name.",
                details={"collection": name},
            )
        index = (yield call(rpc, "describe_index", name, index_name="vector", **kw)) or {}
        found_metric = str(index.get("metric_type", "")).upper()
        if layout["dims"] != dims or (found_metric and found_metric != METRICS[metric]):
            raise VectorStoreError(
                f"Milvus collection {name!r} has dims={layout['dims']} "
                f"metric={found_metric or '?'}, asked dims={dims} metric={METRICS[metric]}",
                hint="Use the embedder and metric the collection was created with, "
                "or another collection name.",
                details={"collection": name, "dims": layout["dims"], "metric": found_metric},
            )
        return bool(layout["has_text"]) and self._text_supported

    def _create(self, name: str, dims: int, metric: str) -> Steps[None]:
        cfg, client = self._config, self._client.client
        schema = build_schema(
            dims, with_text=self._text_supported, analyzer_params=cfg.analyzer_params, metric=metric
        )
        yield call(
            self._client.rpc,
            "create_collection",
            name,
            schema=schema,
            consistency_level=cfg.consistency_level,
            timeout=cfg.timeout,
        )
        self._with_text = self._text_supported
        indexes = build_indexes(
            client,
            metric=metric,
            index_type=cfg.effective_index_type,
            index_params=cfg.effective_index_params,
            with_text=self._with_text,
        )
        for params in indexes:
            # pymilvus' own wait polls every 0.5 s per index; wait for all at once instead.
            yield call(
                self._client.admin, "create_index", name, params, timeout=cfg.timeout, sync=False
            )
        yield from self._wait_for_indexes(name, [p.field_name for ps in indexes for p in ps])

    def _wait_for_indexes(self, name: str, fields: list[str]) -> Steps[None]:
        """Poll until every index of ``fields`` is built (instant on an empty collection)."""
        timeout = self._config.timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.02
        pending = list(fields)
        while pending:
            still = []
            for field in pending:
                info = yield call(
                    self._client.rpc, "describe_index", name, index_name=field, timeout=timeout
                )
                state = str((info or {}).get("state", "Finished"))
                if state.endswith("Failed"):
                    raise VectorStoreError(
                        f"Milvus failed to build the {field!r} index of {name!r}: "
                        f"{(info or {}).get('fail_reason', state)}",
                        details={"collection": name, "field": field},
                    )
                if not state.endswith("Finished"):
                    still.append(field)
            pending = still
            if pending:
                if deadline is not None and time.monotonic() > deadline:
                    raise VectorStoreError(
                        f"Milvus did not finish the indexes {pending} of {name!r} in {timeout}s",
                        hint="Raise the store timeout or check the Milvus index nodes.",
                        details={"collection": name, "fields": pending},
                    )
                yield pause(delay)
                delay = min(delay * 2, 0.5)

    def _bound(self) -> reads.Binding:
        self._check_open()
        if self._binding is None:
            raise not_bound("Milvus")
        return self._binding

    def _check_open(self) -> None:
        if self._closed:
            raise closed("Milvus")

    # -- writes --------------------------------------------------------------------------

    def _upsert(self, records: Sequence[VectorRecord]) -> Steps[None]:
        """Insert or replace ``records``; validated first, sent in size-bounded chunks."""
        b = self._bound()
        rows: dict[str, tuple[dict[str, Any], int]] = {}
        for record in check_records(records, b.dims):
            row, weight = to_row(record, b.dims, self._with_text)
            rows.pop(row["id"], None)  # the last occurrence of an id wins
            rows[row["id"]] = (row, weight)
        chunk: list[dict[str, Any]] = []
        size = 0
        for row, weight in rows.values():
            if chunk and (len(chunk) >= CHUNK_ROWS or size + weight > CHUNK_BYTES):
                yield from self._send(b, chunk)
                chunk, size = [], 0
            chunk.append(row)
            size += weight
        if chunk:
            yield from self._send(b, chunk)
        yield from self._maybe_flush(b)

    def _send(self, b: reads.Binding, rows: list[dict[str, Any]]) -> Steps[None]:
        with engine_errors("upsert", collection=b.name, rows=len(rows)):
            yield call(b.client.rpc, "upsert", b.name, rows, timeout=self._config.timeout)
        self._pending += len(rows)

    def _maybe_flush(self, b: reads.Binding) -> Steps[None]:
        """Milvus Lite: seal the write buffer into an indexed segment once it is large.

        Lite scans its in-memory buffer row by row in Python on every read (~0.1 ms per
        row at 384 dims) while sealed segments are searched through their index.
        """
        if not self._config.is_lite or self._pending < self._config.lite_flush_rows:
            return
        with engine_errors("flush", collection=b.name):
            yield call(b.client.rpc, "flush", b.name, timeout=self._config.timeout)
        self._pending = 0

    def _delete(self, ids: Sequence[str]) -> Steps[None]:
        """Delete ``ids``; unknown ids are ignored."""
        b = self._bound()
        wanted = list(dict.fromkeys(check_ids(ids)))
        for start in range(0, len(wanted), ID_CHUNK):
            with engine_errors("delete", collection=b.name):
                yield call(
                    b.client.rpc,
                    "delete",
                    b.name,
                    ids=wanted[start : start + ID_CHUNK],
                    timeout=self._config.timeout,
                )

    def _update(
        self, id: str, *, vector: Sequence[float] | None = None, payload: Payload | None = None
    ) -> Steps[None]:
        """Replace the vector and/or the whole payload of ``id``; ``NotFound`` if missing."""
        b = self._bound()
        check_id(id)
        new_vector = check_vector(vector, b.dims) if vector is not None else None
        new_payload = check_payload(payload) if payload is not None else None
        existing = yield from self._get([id], with_vectors=new_vector is None)
        if not existing:
            raise NotFound(f"no record {id!r} in Milvus collection {b.name!r}", details={"id": id})
        current = existing[0]
        record = VectorRecord(
            id=id,
            vector=new_vector if new_vector is not None else list(current.vector or []),
            payload=new_payload if new_payload is not None else current.payload,
        )
        yield from self._send(b, [to_row(record, b.dims, self._with_text)[0]])
        yield from self._maybe_flush(b)

    def _drop_collection(self) -> Steps[None]:
        """Drop the bound collection; ``ensure_collection`` recreates it empty."""
        b = self._bound()
        with engine_errors("drop_collection", collection=b.name):
            kw = {"timeout": self._config.timeout}
            if (yield call(b.client.rpc, "has_collection", b.name, **kw)):
                yield call(b.client.rpc, "drop_collection", b.name, **kw)

    # -- reads ---------------------------------------------------------------------------

    def _get(self, ids: Sequence[str], *, with_vectors: bool = False) -> Steps[list[StoredRecord]]:
        """The existing records among ``ids``, in the order asked."""
        b = self._bound()
        asked = check_ids(ids)
        unique = list(dict.fromkeys(asked))
        fields = ["payload", "vector"] if with_vectors else ["payload"]
        found: dict[str, StoredRecord] = {}
        for start in range(0, len(unique), ID_CHUNK):
            with engine_errors("get", collection=b.name):
                rows = yield call(
                    b.client.rpc, "get", b.name, ids=unique[start : start + ID_CHUNK],
                    output_fields=fields, **b.call_kwargs(),
                )  # fmt: skip
            for row in rows:
                vector = [float(x) for x in row["vector"]] if with_vectors else None
                found[row["id"]] = StoredRecord(id=row["id"], payload=row["payload"], vector=vector)
        return [found[i] for i in asked if i in found]

    def _search(
        self, vector: Sequence[float], *, top_k: int = 10, filter: FilterNode | None = None
    ) -> Steps[list[SearchHit]]:
        """The ``top_k`` records most similar to ``vector`` that match ``filter``."""
        b = self._bound()
        query = check_vector(vector, b.dims, "query vector")
        tr, keep = self._filter(filter)
        return (yield from reads.search(b, query, check_positive(top_k, "top_k"), tr, keep))

    def _keyword_search(
        self, text: str, *, top_k: int = 10, filter: FilterNode | None = None
    ) -> Steps[list[SearchHit]]:
        """BM25 search over ``payload["memory"]`` (Milvus 2.5+ / Milvus Lite 3.x)."""
        b = self._bound()
        if not self._with_text:
            raise VectorStoreError(
                f"keyword search is not available on Milvus collection {b.name!r}",
                hint="It needs Milvus 2.5+ (or Milvus Lite 3.x), keyword_search: true, and a "
                "collection created with them.",
            )
        check_text(text)
        top_k = check_positive(top_k, "top_k")
        if not text.strip():
            return []
        tr, keep = self._filter(filter)
        return (yield from reads.keyword_search(b, text, top_k, tr, keep))

    def _list(
        self, *, filter: FilterNode | None = None, limit: int = 100, cursor: str | None = None
    ) -> Steps[Page]:
        """One page of the records matching ``filter``, in id order."""
        b = self._bound()
        limit = check_positive(limit, "limit")
        if cursor is not None and not isinstance(cursor, str):
            raise invalid_cursor(cursor)
        tr, keep = self._filter(filter)
        return (yield from reads.list_page(b, tr, keep, limit, cursor))

    def _count(self, *, filter: FilterNode | None = None) -> Steps[int]:
        """How many records match ``filter``."""
        b = self._bound()
        tr, keep = self._filter(filter)
        return (yield from reads.count(b, tr, keep))

    def _filter(self, node: FilterNode | None) -> tuple[Translation, reads.Predicate]:
        node = parse_filter(node)  # an AST passes through; a dict spec is parsed (FilterError)
        return translate(node, native_numbers=self._config.is_lite), compile_filter(node)

    def _close(self) -> Steps[None]:
        """Close the client and, for Milvus Lite, release the database. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._binding = None
        yield call(self._client.close)

    ensure_collection = blocking(_ensure_collection)
    aensure_collection = awaitable(_ensure_collection)
    upsert = blocking(_upsert)
    aupsert = awaitable(_upsert)
    delete = blocking(_delete)
    adelete = awaitable(_delete)
    update = blocking(_update)
    aupdate = awaitable(_update)
    drop_collection = blocking(_drop_collection)
    adrop_collection = awaitable(_drop_collection)
    get = blocking(_get)
    aget = awaitable(_get)
    search = blocking(_search)
    asearch = awaitable(_search)
    keyword_search = blocking(_keyword_search)
    akeyword_search = awaitable(_keyword_search)
    list = blocking(_list)
    alist = awaitable(_list)
    count = blocking(_count)
    acount = awaitable(_count)
    close = blocking(_close)
    aclose = awaitable(_close)
