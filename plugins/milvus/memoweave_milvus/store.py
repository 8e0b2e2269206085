"""The Milvus vector store (Milvus Lite or a Milvus server).

See :mod:`memoweave.providers.vector_store` for the contract and
:mod:`memoweave_milvus.schema` for the collection layout.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from memoweave.errors import NotFound, ValidationError, VectorStoreError
from memoweave.filters import compile_filter, parse_filter
from memoweave.filters.ast import FilterNode
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
from memoweave_milvus import reads
from memoweave_milvus.config import MilvusStoreConfig
from memoweave_milvus.connection import close_client, engine_errors, open_client
from memoweave_milvus.filters import Translation, translate
from memoweave_milvus.schema import (
    MAX_DIMS,
    METRICS,
    build_indexes,
    build_schema,
    check_id,
    check_payload,
    check_vector,
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
    return bool(match) and int(match.group(1)) >= 3


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
        self._client, self._lite_path = open_client(config)
        self._closed = False
        self._binding: reads.Binding | None = None
        self._pending = 0  # rows written since the last Milvus Lite flush
        if config.is_lite:
            text_ok = lite_supports_bm25()
        else:
            with engine_errors("get_server_version", uri=config.uri):
                text_ok = server_supports_bm25(str(self._client.get_server_version()))
        self._text_supported = config.keyword_search and text_ok
        self._with_text = self._text_supported
        self.capabilities = StoreCapabilities(keyword_search=self._with_text, persistent=True)

    # -- binding -------------------------------------------------------------------------

    def ensure_collection(self, name: str, dims: int, metric: Metric = "cosine") -> None:
        """Create the collection if missing (and load it), open and check it otherwise."""
        self._check_open()
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValidationError(
                f"invalid Milvus collection name {name!r}",
                hint="Use letters, digits and underscores, starting with a letter or _.",
            )
        if isinstance(dims, bool) or not isinstance(dims, int) or not 1 <= dims <= MAX_DIMS:
            raise ValidationError(f"dims must be an integer in [1, {MAX_DIMS}], got {dims!r}")
        if metric not in METRICS:
            raise ValidationError(f"metric must be one of {sorted(METRICS)}, got {metric!r}")
        client, kw = self._client, {"timeout": self._config.timeout}
        with engine_errors("ensure_collection", collection=name):
            if client.has_collection(name, **kw):
                self._with_text = self._check_existing(name, dims, metric)
            else:
                self._create(name, dims, metric)
            state = client.get_load_state(name, **kw).get("state")
            if getattr(state, "name", str(state)) != "Loaded":
                client.load_collection(name, **kw)
        self.capabilities = StoreCapabilities(keyword_search=self._with_text, persistent=True)
        self._binding = reads.Binding(client, name, dims, metric, self._config)

    def _check_existing(self, name: str, dims: int, metric: str) -> bool:
        kw = {"timeout": self._config.timeout}
        layout = describe_layout(self._client.describe_collection(name, **kw))
        if not layout["ours"]:
            raise VectorStoreError(
                f"Milvus collection {name!r} exists but was not created by memoweave",
                hint="Use another collection name.",
                details={"collection": name},
            )
        index = self._client.describe_index(name, index_name="vector", **kw) or {}
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

    def _create(self, name: str, dims: int, metric: str) -> None:
        cfg, client = self._config, self._client
        schema = build_schema(
            dims, with_text=self._text_supported, analyzer_params=cfg.analyzer_params, metric=metric
        )
        client.create_collection(
            name, schema=schema, consistency_level=cfg.consistency_level, timeout=cfg.timeout
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
            client.create_index(name, params, timeout=cfg.timeout, sync=False)
        self._wait_for_indexes(name, [p.field_name for ps in indexes for p in ps])

    def _wait_for_indexes(self, name: str, fields: list[str]) -> None:
        """Poll until every index of ``fields`` is built (instant on an empty collection)."""
        timeout = self._config.timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.02
        pending = list(fields)
        while pending:
            still = []
            for field in pending:
                info = self._client.describe_index(name, index_name=field, timeout=timeout)
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
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _bound(self) -> reads.Binding:
        self._check_open()
        if self._binding is None:
            raise VectorStoreError(
                "the Milvus store is not bound to a collection",
                hint="Call ensure_collection(name, dims, metric) first.",
            )
        return self._binding

    def _check_open(self) -> None:
        if self._closed:
            raise VectorStoreError("the Milvus store is closed", hint="Create a new store.")

    # -- writes --------------------------------------------------------------------------

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Insert or replace ``records``; validated first, sent in size-bounded chunks."""
        b = self._bound()
        if isinstance(records, (str, bytes)) or not isinstance(records, Sequence):
            raise ValidationError("records must be a sequence of VectorRecord")
        rows: dict[str, tuple[dict[str, Any], int]] = {}
        for record in records:
            row, weight = to_row(record, b.dims, self._with_text)
            rows.pop(row["id"], None)  # the last occurrence of an id wins
            rows[row["id"]] = (row, weight)
        chunk: list[dict[str, Any]] = []
        size = 0
        for row, weight in rows.values():
            if chunk and (len(chunk) >= CHUNK_ROWS or size + weight > CHUNK_BYTES):
                self._send(b, chunk)
                chunk, size = [], 0
            chunk.append(row)
            size += weight
        if chunk:
            self._send(b, chunk)
        self._maybe_flush(b)

    def _send(self, b: reads.Binding, rows: list[dict[str, Any]]) -> None:
        with engine_errors("upsert", collection=b.name, rows=len(rows)):
            b.client.upsert(b.name, rows, timeout=self._config.timeout)
        self._pending += len(rows)

    def _maybe_flush(self, b: reads.Binding) -> None:
        """Milvus Lite: seal the write buffer into an indexed segment once it is large.

        Lite scans its in-memory buffer row by row in Python on every read (~0.1 ms per
        row at 384 dims) while sealed segments are searched through their index.
        """
        if not self._config.is_lite or self._pending < self._config.lite_flush_rows:
            return
        with engine_errors("flush", collection=b.name):
            b.client.flush(b.name, timeout=self._config.timeout)
        self._pending = 0

    def delete(self, ids: Sequence[str]) -> None:
        """Delete ``ids``; unknown ids are ignored."""
        b = self._bound()
        wanted = list(dict.fromkeys(check_id(i) for i in _ids(ids)))
        for start in range(0, len(wanted), ID_CHUNK):
            with engine_errors("delete", collection=b.name):
                b.client.delete(
                    b.name, ids=wanted[start : start + ID_CHUNK], timeout=self._config.timeout
                )

    def update(
        self, id: str, *, vector: Sequence[float] | None = None, payload: Payload | None = None
    ) -> None:
        """Replace the vector and/or the whole payload of ``id``; ``NotFound`` if missing."""
        b = self._bound()
        check_id(id)
        new_vector = check_vector(vector, b.dims) if vector is not None else None
        new_payload = check_payload(payload)[0] if payload is not None else None
        existing = self.get([id], with_vectors=new_vector is None)
        if not existing:
            raise NotFound(f"no record {id!r} in Milvus collection {b.name!r}", details={"id": id})
        current = existing[0]
        record = VectorRecord(
            id=id,
            vector=new_vector if new_vector is not None else list(current.vector or []),
            payload=new_payload if new_payload is not None else current.payload,
        )
        self._send(b, [to_row(record, b.dims, self._with_text)[0]])
        self._maybe_flush(b)

    def drop_collection(self) -> None:
        """Drop the bound collection; ``ensure_collection`` recreates it empty."""
        b = self._bound()
        with engine_errors("drop_collection", collection=b.name):
            if b.client.has_collection(b.name, timeout=self._config.timeout):
                b.client.drop_collection(b.name, timeout=self._config.timeout)

    # -- reads ---------------------------------------------------------------------------

    def get(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[StoredRecord]:
        """The existing records among ``ids``, in the order asked."""
        b = self._bound()
        asked = [check_id(i) for i in _ids(ids)]
        unique = list(dict.fromkeys(asked))
        fields = ["payload", "vector"] if with_vectors else ["payload"]
        found: dict[str, StoredRecord] = {}
        for start in range(0, len(unique), ID_CHUNK):
            with engine_errors("get", collection=b.name):
                rows = b.client.get(
                    b.name, ids=unique[start : start + ID_CHUNK], output_fields=fields,
                    **b.call_kwargs(),
                )  # fmt: skip
            for row in rows:
                vector = [float(x) for x in row["vector"]] if with_vectors else None
                found[row["id"]] = StoredRecord(id=row["id"], payload=row["payload"], vector=vector)
        return [found[i] for i in asked if i in found]

    def search(
        self, vector: Sequence[float], *, top_k: int = 10, filter: FilterNode | None = None
    ) -> list[SearchHit]:
        """The ``top_k`` records most similar to ``vector`` that match ``filter``."""
        b = self._bound()
        query = check_vector(vector, b.dims, "query vector")
        tr, keep = self._filter(filter)
        return reads.search(b, query, _positive("top_k", top_k), tr, keep)

    def keyword_search(
        self, text: str, *, top_k: int = 10, filter: FilterNode | None = None
    ) -> list[SearchHit]:
        """BM25 search over ``payload["memory"]`` (Milvus 2.5+ / Milvus Lite 3.x)."""
        b = self._bound()
        if not self._with_text:
            raise VectorStoreError(
                f"keyword search is not available on Milvus collection {b.name!r}",
                hint="It needs Milvus 2.5+ (or Milvus Lite 3.x), keyword_search: true, and a "
                "collection created with them.",
            )
        if not isinstance(text, str):
            raise ValidationError(f"text must be a string, got {type(text).__name__}")
        top_k = _positive("top_k", top_k)
        if not text.strip():
            return []
        tr, keep = self._filter(filter)
        return reads.keyword_search(b, text, top_k, tr, keep)

    def list(
        self, *, filter: FilterNode | None = None, limit: int = 100, cursor: str | None = None
    ) -> Page:
        """One page of the records matching ``filter``, in id order."""
        b = self._bound()
        if cursor is not None and not isinstance(cursor, str):
            raise ValidationError(f"cursor must be a string or None, got {cursor!r}")
        tr, keep = self._filter(filter)
        return reads.list_page(b, tr, keep, _positive("limit", limit), cursor)

    def count(self, *, filter: FilterNode | None = None) -> int:
        """How many records match ``filter``."""
        b = self._bound()
        tr, keep = self._filter(filter)
        return reads.count(b, tr, keep)

    def _filter(self, node: FilterNode | None) -> tuple[Translation, reads.Predicate]:
        node = parse_filter(node)  # an AST passes through; a dict spec is parsed (FilterError)
        return translate(node, native_numbers=self._config.is_lite), compile_filter(node)

    def close(self) -> None:
        """Close the client and, for Milvus Lite, release the database. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._binding = None
        close_client(self._client, self._lite_path)


def _ids(ids: Sequence[str]) -> Sequence[str]:
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence):
        raise ValidationError("ids must be a sequence of strings")
    return ids


def _positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{name} must be a positive integer, got {value!r}")
    return value
