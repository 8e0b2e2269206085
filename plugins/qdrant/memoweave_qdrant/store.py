"""The ``qdrant`` vector store: memoweave's contract on top of one Qdrant engine.

See :mod:`memoweave.providers.vector_store` for the contract. Ids are stored as native
Qdrant UUID point ids; filters are translated by :mod:`memoweave_qdrant.filters` and, when
the translation is only a superset (``icontains``), post-filtered with
:func:`memoweave.filters.evaluate`. Every engine exception becomes a ``VectorStoreError``
carrying the engine's message.

Every method is written once, as a pipeline of engine calls (:mod:`memoweave.runtime.
steps`; the plumbing: :mod:`memoweave_qdrant.store_steps`). :class:`QdrantVectorStore`
(Qdrant Edge, synchronous by nature) runs them in the calling thread;
:class:`QdrantClientStore` (qdrant-client local mode or a server) also has native async
twins that await the engine's ``AsyncQdrantClient`` calls.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from uuid import UUID

from memoweave.errors import NotFound, ValidationError, VectorStoreError
from memoweave.filters.ast import FilterNode
from memoweave.providers.checks import check_positive
from memoweave.providers.store_checks import (
    check_dims,
    check_metric,
    check_payload,
    check_records,
    check_text,
    check_vector,
    closed,
)
from memoweave.providers.vector_store import (
    TEXT_FIELD,
    Metric,
    Page,
    Payload,
    SearchHit,
    StoredRecord,
    VectorRecord,
)
from memoweave.runtime.aio import awaitable
from memoweave.runtime.steps import Steps, blocking, run
from memoweave_qdrant import codec
from memoweave_qdrant.config import QdrantStoreConfig
from memoweave_qdrant.store_steps import EngineSteps


def create_store(config: QdrantStoreConfig) -> QdrantVectorStore:
    """The store of ``config``'s mode: client modes get native async twins."""
    if config.resolved_mode == "edge":
        return QdrantVectorStore(config)
    return QdrantClientStore(config)


class QdrantVectorStore(EngineSteps):
    """A memoweave vector store backed by Qdrant Edge, qdrant-client local mode or a server."""

    # -- contract, as pipelines ------------------------------------------------------
    def _ensure_collection(self, name: str, dims: int, metric: Metric = "cosine") -> Steps[None]:
        """Create or open ``name`` and bind to it; ``VectorStoreError`` on a dims/metric clash."""
        codec.check_collection_name(name)
        check_dims(dims)
        check_metric(metric)
        if self._closed:
            raise closed("Qdrant")
        yield from self._open(name, dims, metric)

    def describe_collection(self, name: str) -> tuple[int, Metric] | None:
        """``(dims, metric)`` of collection ``name``, or ``None``; never creates it. A
        bound store stays bound to its own collection."""
        codec.check_collection_name(name)
        if self._closed:
            raise closed("Qdrant")
        engine = self._engine

        def describe() -> tuple[int, Metric] | None:
            try:
                return engine.open(name, 1, "cosine", create=False)
            except LookupError:
                return None

        found = run(self._step("describe collection", describe))
        if self._name is not None:  # the engine looked at ``name``: reopen the bound one
            run(self._open(self._name, self._dims, self._metric))
        return found

    def _upsert(self, records: Sequence[VectorRecord]) -> Steps[None]:
        """Insert or replace ``records`` in one engine call (idempotent by id)."""
        engine = yield from self._bound()
        cosine = self._metric == "cosine"
        points = []
        for record in check_records(records, self._dims):
            norm = codec.norm_of(record.vector) if cosine else None
            pid = codec.parse_id(record.id)
            points.append((pid, record.vector, codec.encode_payload(record.payload, norm=norm)))
        if points:
            yield from self._step("upsert", engine.upsert, points)

    def _search(
        self, vector: Sequence[float], *, top_k: int = 10, filter: FilterNode | None = None
    ) -> Steps[list[SearchHit]]:
        """The ``top_k`` most similar records matching ``filter``, best first."""
        engine = yield from self._bound()
        query = check_vector(vector, self._dims, "query vector")
        check_positive(top_k, "top_k")
        where, keep = self._filter(filter)
        return (
            yield from self._ranked(
                lambda n: self._step("search", engine.search, query, n, where), top_k, keep
            )
        )

    def _keyword_search(
        self, text: str, *, top_k: int = 10, filter: FilterNode | None = None
    ) -> Steps[list[SearchHit]]:
        """BM25 over ``payload["memory"]`` (Qdrant's text index with scoring; only with
        ``text_index: true``)."""
        engine = yield from self._bound()
        if not self.config.text_index:
            raise VectorStoreError(
                "this Qdrant store keeps no text index, so it has no keyword search",
                hint="Set text_index: true in the qdrant config (for retrieval.keyword_source:"
                " store), or leave keyword search to the core (keyword_source: core).",
                details={"reason": "no_text_index"},
            )
        check_text(text)
        check_positive(top_k, "top_k")
        if not text.strip():
            return []
        where, keep = self._filter(filter)
        hits = yield from self._ranked(
            lambda n: self._step("keyword search", engine.text_search, text, TEXT_FIELD, n, where),
            top_k,
            keep,
        )
        if self._metric == "euclidean":  # undo _ranked's distance negation: BM25 is a score
            return [SearchHit(h.id, -h.score, h.payload) for h in hits]
        return hits

    def _get(self, ids: Sequence[str], *, with_vectors: bool = False) -> Steps[list[StoredRecord]]:
        """The existing records among ``ids``, in the order asked."""
        engine = yield from self._bound()
        wanted = codec.parse_ids(ids)
        if not wanted:
            return []
        rows = yield from self._step(
            "retrieve", engine.retrieve, list(dict.fromkeys(wanted)), with_vectors
        )
        by_id = {row.id: row for row in rows}
        out = []
        for pid in wanted:
            row = by_id.get(pid)
            if row is not None:
                vector = codec.decode_vector(row.vector, row.payload) if with_vectors else None
                out.append(StoredRecord(str(pid), codec.decode_payload(row.payload), vector))
        return out

    def _delete(self, ids: Sequence[str]) -> Steps[None]:
        """Delete ``ids``; missing ids are ignored."""
        engine = yield from self._bound()
        wanted = codec.parse_ids(ids)
        if wanted:
            yield from self._step("delete", engine.delete, wanted)

    def _update(
        self, id: str, *, vector: Sequence[float] | None = None, payload: Payload | None = None
    ) -> Steps[None]:
        """Replace the vector and/or the whole payload of ``id``; ``NotFound`` if missing."""
        engine = yield from self._bound()
        pid = codec.parse_id(id)
        new_vector = check_vector(vector, self._dims) if vector is not None else None
        new_norm = codec.norm_of(new_vector) if new_vector is not None else 0.0
        new_payload = (
            codec.encode_payload(check_payload(payload), norm=None) if payload is not None else None
        )
        rows = yield from self._step("retrieve", engine.retrieve, [pid], False)
        if not rows:
            raise NotFound(f"record {id} does not exist", details={"id": id})
        stored = new_payload if new_payload is not None else dict(rows[0].payload)
        if self._metric == "cosine":
            if new_vector is not None:
                stored[codec.NORM_KEY] = new_norm
            elif codec.NORM_KEY in rows[0].payload:
                stored[codec.NORM_KEY] = rows[0].payload[codec.NORM_KEY]
        if new_vector is not None:
            yield from self._step("update vector", engine.set_vector, pid, new_vector)
        if new_payload is not None or (new_vector is not None and self._metric == "cosine"):
            yield from self._step("update payload", engine.set_payload, pid, stored)

    def _list(
        self, *, filter: FilterNode | None = None, limit: int = 100, cursor: str | None = None
    ) -> Steps[Page]:
        """One page of matching records in id order; the cursor is the next record's id."""
        engine = yield from self._bound()
        check_positive(limit, "limit")
        start = self._cursor(cursor)
        where, keep = self._filter(filter)
        if keep is None:
            rows, nxt = yield from self._step("scroll", engine.scroll, where, limit, start)
            records = [StoredRecord(str(r.id), codec.decode_payload(r.payload)) for r in rows]
            return Page(records, str(nxt) if nxt is not None else None)
        found = yield from self._matching(where, keep, start, limit + 1)
        if len(found) > limit:
            return Page(found[:limit], found[limit].id)
        return Page(found, None)

    def _count(self, *, filter: FilterNode | None = None) -> Steps[int]:
        """Exact number of records matching ``filter``."""
        engine = yield from self._bound()
        where, keep = self._filter(filter)
        if keep is None:
            return (yield from self._step("count", engine.count, where))
        return len((yield from self._matching(where, keep, None, None)))

    def _has_records(self, *, filter: FilterNode | None = None) -> Steps[bool]:
        """Whether any record matches ``filter`` (Qdrant Edge: from the first partition
        holding one, the loaded ones and those :meth:`expect_reads` named first)."""
        engine = yield from self._bound()
        where, keep = self._filter(filter)
        if keep is None:
            held = yield from self._step("holds", engine.holds, where)
            if held is not None:
                return held
            rows, _ = yield from self._step("scroll", engine.scroll, where, 1, None)
            return bool(rows)
        return bool((yield from self._matching(where, keep, None, 1)))

    def expect_reads(self, filter: FilterNode) -> None:
        """Edge mode: the partition of the ``user_id`` that ``filter`` pins (if any) is
        the one looked in first by reads that may need several
        (:meth:`.EdgeEngine.expect_reads`)."""
        self._engine.expect_reads(self._filter(filter)[0])

    def expect_writes(self, stored: Mapping[str, Payload | None]) -> None:
        """Edge mode, partitioned: the next write of each id looks for its record only in
        the partition its payload routes to (checked; everywhere when not found there), and
        nowhere for an id said to hold nothing (:mod:`.edge_writes`). ``ValidationError``
        for an id that is not a record id or a payload that is not a dict."""
        if not isinstance(stored, Mapping):
            raise ValidationError(
                f"expect_writes takes a mapping of record id to payload or None, got "
                f"{type(stored).__name__}",
                hint="Pass {id: payload_or_None, ...}.",
            )
        hints: dict[UUID, Payload | None] = {}
        for id, payload in stored.items():
            if payload is not None and not isinstance(payload, dict):
                raise ValidationError(
                    f"expect_writes: the payload of {id!r} must be a dict or None, got "
                    f"{type(payload).__name__}",
                    hint="Pass the record's stored payload, or None for a new id.",
                )
            hints[codec.parse_id(id)] = payload
        self._engine.expect_writes(hints)

    def _drop_collection(self) -> Steps[None]:
        """Delete the bound collection; it is recreated empty on next use."""
        engine = yield from self._bound()
        name = self._name
        assert name is not None
        yield from self._step("drop collection", engine.drop, name)
        self._dropped = True

    def _close(self) -> Steps[None]:
        """Flush and release the engine (and its folder lock). Idempotent."""
        if self._closed:
            return
        self._closed = True
        yield from self._step("close", self._engine.close)

    def expect_exit(self) -> None:
        """Edge mode: the shard opened next skips the memory advice whose only use is a
        long-running process's resident memory (:meth:`.EdgeEngine.expect_exit`)."""
        self._engine.expect_exit()

    def close_at_exit(self) -> None:
        """Edge mode with nothing written since the shard loaded or was last flushed: the
        shard is left loaded for the process's exit instead of closed (Qdrant Edge's close
        syncs each mapped file and rewrites every segment's version file, 60-340 ms wall
        at 1k-100k memories for a shard only read; the exit releases the folder lock).
        Otherwise :meth:`close`."""
        if not self._closed and self._engine.leave_to_exit():
            self._closed = True
            return
        self.close()

    ensure_collection = blocking(_ensure_collection)
    upsert = blocking(_upsert)
    search = blocking(_search)
    keyword_search = blocking(_keyword_search)
    get = blocking(_get)
    delete = blocking(_delete)
    update = blocking(_update)
    list = blocking(_list)
    count = blocking(_count)
    has_records = blocking(_has_records)
    drop_collection = blocking(_drop_collection)
    close = blocking(_close)

    def repair_collection(self, name: str) -> builtins.list[str]:
        """Rebuild what stops ``name`` from opening without deleting a record (edge mode: a
        lost or damaged ``memoweave.json``, from the shard's own configuration)."""
        codec.check_collection_name(name)
        if self._closed:
            raise closed("Qdrant")
        repaired = run(self._step("repair collection", self._engine.repair, name))
        self._dropped = self._dropped or (bool(repaired) and self._name == name)
        return repaired


class QdrantClientStore(QdrantVectorStore):
    """The store over qdrant-client (local mode or a server), with native async twins:
    the same pipelines, each engine call awaited on ``AsyncQdrantClient``. In local mode
    one store instance is used either synchronously or asynchronously (qdrant-client
    keeps one client per folder); mixing the two raises ``VectorStoreError``."""

    aensure_collection = awaitable(QdrantVectorStore._ensure_collection)
    aupsert = awaitable(QdrantVectorStore._upsert)
    asearch = awaitable(QdrantVectorStore._search)
    akeyword_search = awaitable(QdrantVectorStore._keyword_search)
    aget = awaitable(QdrantVectorStore._get)
    adelete = awaitable(QdrantVectorStore._delete)
    aupdate = awaitable(QdrantVectorStore._update)
    alist = awaitable(QdrantVectorStore._list)
    acount = awaitable(QdrantVectorStore._count)
    ahas_records = awaitable(QdrantVectorStore._has_records)
    adrop_collection = awaitable(QdrantVectorStore._drop_collection)
    aclose = awaitable(QdrantVectorStore._close)
