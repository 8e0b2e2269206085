"""The built-in in-memory vector store (provider name ``memory``).

Exact (brute-force) search with numpy when it is importable, pure Python otherwise; filters
are applied with the reference evaluator, so results agree with
:func:`memoweave.filters.evaluate` by construction. ``keyword_search`` is Okapi BM25 over
the payload's ``TEXT_FIELD`` (``"memory"``) string, the memory text.

Order: ``list`` returns records in first-insertion order (re-upserting an id keeps its
place); the cursor survives deletions between pages. Payloads and vectors are copied on the
way in and on the way out, so neither the caller's objects nor the store can be changed
through an alias. All methods are serialised by one re-entrant lock.

Persistence (``path`` set): ``path`` is a directory (created on demand) holding one JSON
file per collection, ``<path>/<name>.json``, with dims, metric, ids, payloads and the
vectors as one base64 block of little-endian float64. ``ensure_collection`` reads it; it
is rewritten atomically (temp file + fsync + ``os.replace``) after every write and on
``close``. A rewrite costs O(collection size), so the persistent mode suits tests, demos
and collections up to tens of thousands of records; one store instance should own a
directory at a time. If a save fails, the collection is restored from the last good file
and ``VectorStoreError`` is raised, so memory and disk stay consistent.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pydantic

from memoweave.errors import ConfigError, NotFound, VectorStoreError
from memoweave.filters import FilterNode, compile_filter, parse_filter
from memoweave.providers.checks import check_positive
from memoweave.providers.store_checks import (
    check_collection_name,
    check_dims,
    check_id,
    check_ids,
    check_metric,
    check_payload,
    check_records,
    check_text,
    check_vector,
    closed,
    invalid,
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
from memoweave.stores._checks import clone, decode_cursor, encode_cursor
from memoweave.stores._collection import (
    Collection,
    delete_collection,
    read_collection,
    write_collection,
)
from memoweave.stores.memory_config import InMemoryStoreConfig

_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")
_NAME_RULE = "Use 1-200 letters, digits, '_', '-' or '.', not starting with '-' or '.'."


class InMemoryVectorStore(VectorStore):
    """A :class:`VectorStore` kept in process memory, optionally saved to ``config.path``."""

    def __init__(self, config: InMemoryStoreConfig | Mapping[str, Any] | None = None) -> None:
        if config is None:
            config = InMemoryStoreConfig()
        elif isinstance(config, Mapping):
            try:
                config = InMemoryStoreConfig.model_validate(dict(config))
            except pydantic.ValidationError as exc:
                raise ConfigError(
                    f"invalid memory store config: {exc.errors()[0]['msg']} "
                    f"at {'.'.join(map(str, exc.errors()[0]['loc']))}",
                    hint="The memory store accepts only 'path' (a file or directory, or null).",
                ) from exc
        elif not isinstance(config, InMemoryStoreConfig):
            raise invalid(f"config must be an InMemoryStoreConfig, got {type(config).__name__}")
        self.config = config
        self._dir = Path(config.path).expanduser() if config.path else None
        self.capabilities = StoreCapabilities(keyword_search=True, persistent=bool(self._dir))
        self._lock = threading.RLock()
        self._collections: dict[str, Collection] = {}
        self._bound: tuple[str, int, str] | None = None
        self._closed = False

    # -- binding -------------------------------------------------------------------------

    def ensure_collection(self, name: str, dims: int, metric: Metric = "cosine") -> None:
        """Create or open collection ``name`` and bind to it; dims/metric must match."""
        check_collection_name(name, _NAME_RE, _NAME_RULE)
        check_dims(dims)
        check_metric(metric)
        with self._lock:
            self._check_open()
            coll = self._collections.get(name) or self._load(name)
            if coll is None:
                coll = self._collections[name] = Collection(name, dims, metric)
                self._commit(coll)
            self._collections[name] = coll
            if (coll.dims, coll.metric) != (dims, metric):
                raise VectorStoreError(
                    f"collection {name!r} exists with dims={coll.dims}, metric={coll.metric!r};"
                    f" asked for dims={dims}, metric={metric!r}",
                    hint="Use the collection's dims and metric, or drop it / pick another name.",
                    details={"collection": name},
                )
            self._bound = (name, dims, metric)

    def describe_collection(self, name: str) -> tuple[int, Metric] | None:
        """``(dims, metric)`` of collection ``name`` (in memory or on disk), or ``None``."""
        with self._lock:
            self._check_open()
            coll = self._collections.get(name) or self._load(name)
        return None if coll is None else (coll.dims, coll.metric)  # type: ignore[return-value]  # checked on load

    def _check_open(self) -> None:
        if self._closed:
            raise closed("memory")

    def _reading(self) -> Collection:
        """The bound collection (an empty stand-in if it was dropped)."""
        self._check_open()
        if self._bound is None:
            raise not_bound("memory")
        name, dims, metric = self._bound
        return self._collections.get(name) or Collection(name, dims, metric)

    def _writing(self) -> Collection:
        """The bound collection, recreated empty if it was dropped."""
        coll = self._reading()
        self._collections[coll.name] = coll
        return coll

    # -- writes --------------------------------------------------------------------------

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Insert or replace ``records``; all are validated before any is written."""
        with self._lock:
            coll = self._writing()
            checked = check_records(records, coll.dims)
            if not checked:
                return
            for rec in checked:
                coll.put(rec.id, rec.vector, rec.payload)
            self._commit(coll)

    def update(
        self, id: str, *, vector: Sequence[float] | None = None, payload: Payload | None = None
    ) -> None:
        """Replace the vector and/or whole payload of ``id``; ``NotFound`` if it is missing."""
        with self._lock:
            coll = self._writing()
            check_id(id)
            row = coll.row_of.get(id)
            if row is None:
                raise NotFound(f"no record with id {id!r} in collection {coll.name!r}")
            new_vector = None if vector is None else check_vector(vector, coll.dims)
            new_payload = None if payload is None else check_payload(payload, "payload")
            if new_vector is None and new_payload is None:
                return
            if new_vector is not None:
                coll.table.set(row, new_vector)
            if new_payload is not None:
                coll.payloads[row] = new_payload
                coll.index_text(id, new_payload)
            self._commit(coll)

    def delete(self, ids: Sequence[str]) -> None:
        """Delete ``ids``; unknown ids are ignored."""
        with self._lock:
            coll = self._writing()
            ids = check_ids(ids)
            if any(id in coll.row_of for id in ids):
                for id in ids:
                    coll.remove(id)
                self._commit(coll)

    def drop_collection(self) -> None:
        """Delete the bound collection (and its file); the binding is kept."""
        with self._lock:
            coll = self._reading()
            self._collections.pop(coll.name, None)
            if self._dir is not None:
                delete_collection(self._dir, coll.name)

    # -- reads ---------------------------------------------------------------------------

    def search(
        self, vector: Sequence[float], *, top_k: int = 10, filter: FilterNode | None = None
    ) -> list[SearchHit]:
        """The ``top_k`` most similar records matching ``filter``, best first."""
        with self._lock:
            coll = self._reading()
            query = check_vector(vector, coll.dims, "query vector")
            k = check_positive(top_k, "top_k")
            node = parse_filter(filter)
            rows = None if node is None else coll.live_rows(compile_filter(node))
            if (rows is None and not coll.row_of) or rows == []:
                return []
            return [
                SearchHit(id=coll.ids[row], score=score, payload=clone(coll.payloads[row]))  # type: ignore[arg-type]  # live row
                for row, score in coll.table.top_k(query, coll.metric, k, rows)
            ]

    def keyword_search(
        self, text: str, *, top_k: int = 10, filter: FilterNode | None = None
    ) -> list[SearchHit]:
        """BM25 ranking of records whose ``"memory"`` text shares a term with ``text``."""
        with self._lock:
            coll = self._reading()
            check_text(text)
            k = check_positive(top_k, "top_k")
            predicate = compile_filter(parse_filter(filter))

            def accept(id: Any) -> bool:
                return predicate(coll.payloads[coll.row_of[id]])  # type: ignore[arg-type]  # live row

            return [
                SearchHit(
                    id=str(id), score=score, payload=clone(coll.payloads[coll.row_of[str(id)]])
                )
                for id, score in coll.bm25.search(text, k, accept)
            ]

    def get(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[StoredRecord]:
        """The existing records among ``ids``, in the order asked."""
        with self._lock:
            coll = self._reading()
            rows = [(id, coll.row_of.get(id)) for id in check_ids(ids)]
            return [self._record(coll, row, with_vectors) for _, row in rows if row is not None]

    def list(
        self, *, filter: FilterNode | None = None, limit: int = 100, cursor: str | None = None
    ) -> Page:
        """One page of matching records in insertion order; ``next_cursor`` ``None`` at the end."""
        with self._lock:
            coll = self._reading()
            limit = check_positive(limit, "limit")
            predicate = compile_filter(parse_filter(filter))
            start = bisect_right(coll.seqs, decode_cursor(cursor))
            out: list[StoredRecord] = []
            last = -1
            for row in range(start, len(coll.payloads)):
                payload = coll.payloads[row]
                if payload is None or not predicate(payload):
                    continue
                if len(out) == limit:
                    return Page(out, encode_cursor(coll.seqs[last]))
                out.append(self._record(coll, row, False))
                last = row
            return Page(out, None)

    def count(self, *, filter: FilterNode | None = None) -> int:
        """How many records match ``filter``."""
        with self._lock:
            coll = self._reading()
            node = parse_filter(filter)
            if node is None:
                return len(coll.row_of)
            return len(coll.live_rows(compile_filter(node)))

    def close(self) -> None:
        """Save (when persistent) and release the data. Idempotent."""
        with self._lock:
            if self._closed:
                return
            try:
                for coll in self._collections.values():
                    self._save(coll)
            finally:
                self._closed = True
                self._collections.clear()

    # -- helpers -------------------------------------------------------------------------

    @staticmethod
    def _record(coll: Collection, row: int, with_vectors: bool) -> StoredRecord:
        vector = coll.table.get(row) if with_vectors else None
        return StoredRecord(id=coll.ids[row], payload=clone(coll.payloads[row]), vector=vector)  # type: ignore[arg-type]  # live row

    def _commit(self, coll: Collection) -> None:
        """Save after a write to ``coll``; on failure restore its last saved state and raise."""
        try:
            self._save(coll)
        except VectorStoreError:
            restored = self._load(coll.name)
            if restored is None:
                self._collections.pop(coll.name, None)
            else:
                self._collections[coll.name] = restored
            raise

    def _load(self, name: str) -> Collection | None:
        return None if self._dir is None else read_collection(self._dir, name)

    def _save(self, coll: Collection) -> None:
        if self._dir is not None:
            write_collection(self._dir, coll)


__all__ = ["InMemoryStoreConfig", "InMemoryVectorStore"]
