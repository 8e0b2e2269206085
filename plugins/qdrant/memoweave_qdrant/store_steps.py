"""The plumbing under :class:`memoweave_qdrant.store.QdrantVectorStore`: the engine
built from the config, one pipeline step per engine call (:mod:`memoweave.runtime.steps`)
whose exceptions become a ``VectorStoreError`` naming the step and carrying the engine's
message, the binding to one collection, filter translation and the ranked and
post-filtered reads the contract's methods are written with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar
from uuid import UUID

from memoweave.errors import MemoweaveError, ValidationError, VectorStoreError
from memoweave.filters.ast import FilterNode
from memoweave.providers.file_lock import LockHeld
from memoweave.providers.store_checks import closed, invalid_cursor, not_bound
from memoweave.providers.vector_store import (
    EXPIRY_KEY,
    HASH_KEY,
    SCOPE_KEYS,
    STATUS_KEY,
    TEXT_FIELD,
    Metric,
    Payload,
    SearchHit,
    StoreCapabilities,
    StoredRecord,
    VectorStore,
)
from memoweave.runtime.steps import Steps, call, run
from memoweave_qdrant import codec
from memoweave_qdrant.config import QdrantStoreConfig
from memoweave_qdrant.engine import Engine, Row
from memoweave_qdrant.filters import LISTS_KEY, Clause, translate

T = TypeVar("T")
Keep = Callable[[Payload], bool]

_LOCK_MARKERS = ("WouldBlock", "already accessed by another instance", "Resource temporarily")
_LOCK_HINT = (
    "Close the other memoweave process or store using this folder; to share one store "
    "between processes, run a Qdrant server and configure url: http://host:6333 instead."
)


def engine_error(action: str, exc: BaseException, where: str) -> VectorStoreError:
    """The typed error of engine step ``action`` failing with ``exc`` on the storage at
    ``where`` (a lock held elsewhere gets its own message and hint)."""
    message = str(exc) or type(exc).__name__
    if isinstance(exc, LockHeld) or any(marker in message for marker in _LOCK_MARKERS):
        return VectorStoreError(
            f"the Qdrant storage at {where} is locked by another process or store "
            f"(engine said: {message})",
            hint=_LOCK_HINT,
            details={"action": action, "location": where, "engine_message": message},
        )
    return VectorStoreError(
        f"qdrant {action} failed: {message}",
        details={"action": action, "location": where, "engine_message": message},
    )


def build_engine(config: QdrantStoreConfig) -> Engine:
    """The engine of ``config``'s mode (Qdrant Edge, or qdrant-client)."""
    if config.resolved_mode == "edge":
        from memoweave_qdrant.edge_engine import EdgeEngine

        return EdgeEngine(
            config.edge_root(),
            config.edge_index_threshold_kb(),
            config.edge_vector_datatype(),
            config.edge_partitions(),
        )
    from memoweave_qdrant.client_engine import ClientEngine

    return ClientEngine(config)


class EngineSteps(VectorStore):
    """A vector store over one :class:`.Engine` built from ``config``: the plumbing its
    contract methods (:class:`memoweave_qdrant.store.QdrantVectorStore`) are written with."""

    def __init__(self, config: QdrantStoreConfig) -> None:
        self.config = config
        self._where: str = str(
            config.url
            if config.resolved_mode == "server"
            else (
                config.location or str(config.edge_root() if config.mode == "edge" else config.path)
            )
        )
        self.capabilities = StoreCapabilities(
            keyword_search=config.text_index, persistent=config.persistent
        )
        self._name: str | None = None
        self._dims = 0
        self._metric: Metric = "cosine"
        self._dropped = False
        self._closed = False
        self._engine = run(self._step("open", build_engine, config))

    # -- plumbing --------------------------------------------------------------------
    def _step(self, action: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> Steps[T]:
        """The pipeline of one engine call; engine exceptions become VectorStoreError."""
        try:
            return (yield call(fn, *args, **kwargs))
        except MemoweaveError:
            raise
        except Exception as exc:
            raise engine_error(action, exc, self._where) from exc

    def _bound(self) -> Steps[Engine]:
        if self._closed:
            raise closed("Qdrant")
        if self._name is None:
            raise not_bound("Qdrant")
        if self._dropped:
            yield from self._open(self._name, self._dims, self._metric)
        return self._engine

    def _open(self, name: str, dims: int, metric: Metric) -> Steps[None]:
        engine = self._engine
        actual = yield from self._step(
            "open collection", engine.open, name, dims, metric, create=True
        )
        if actual != (dims, metric):
            self._name = None
            raise VectorStoreError(
                f"collection {name!r} exists with dims={actual[0]} metric={actual[1]!r}, "
                f"asked for dims={dims} metric={metric!r}",
                hint="Use another collection name, or drop the collection to recreate it.",
            )
        keyword = (*SCOPE_KEYS, STATUS_KEY, HASH_KEY, LISTS_KEY)
        text = TEXT_FIELD if self.config.text_index else None
        yield from self._step("create indexes", engine.ensure_indexes, keyword, (EXPIRY_KEY,), text)
        self._name, self._dims, self._metric, self._dropped = name, dims, metric, False

    def _filter(self, filter: FilterNode | None) -> tuple[Clause | None, Keep | None]:
        """The native clause, and the post-filter when the clause is only a superset."""
        where, exact = translate(filter)
        if exact:
            return where, None
        from memoweave.filters import evaluate

        return where, lambda payload: evaluate(filter, payload)

    def _score(self, raw: float) -> float:
        return -raw if self._metric == "euclidean" else raw

    def _ranked(
        self, fetch: Callable[[int], Steps[list[Row]]], top_k: int, keep: Keep | None
    ) -> Steps[list[SearchHit]]:
        """Hits from ``fetch(limit)``, widening the fetch until ``top_k`` pass ``keep``."""
        limit = top_k
        while True:
            rows = yield from fetch(limit)
            hits = []
            for row in rows:
                payload = codec.decode_payload(row.payload)
                if keep is None or keep(payload):
                    hits.append(SearchHit(str(row.id), self._score(row.score), payload))
            if len(hits) >= top_k or len(rows) < limit:
                return hits[:top_k]
            limit *= 4

    def _matching(
        self, where: Clause | None, keep: Keep, start: UUID | None, stop_after: int | None
    ) -> Steps[list[StoredRecord]]:
        """The records matching from ``start`` on, in id order (post-filtered); at most
        ``stop_after`` of them when given."""
        engine = yield from self._bound()
        offset, found = start, []
        while True:
            rows, offset = yield from self._step("scroll", engine.scroll, where, 256, offset)
            for row in rows:
                payload = codec.decode_payload(row.payload)
                if keep(payload):
                    found.append(StoredRecord(str(row.id), payload))
                    if stop_after is not None and len(found) >= stop_after:
                        return found
            if offset is None:
                return found

    def _cursor(self, cursor: str | None) -> UUID | None:
        if cursor is None:
            return None
        try:
            return codec.parse_id(cursor)
        except ValidationError:
            raise invalid_cursor(cursor) from None
