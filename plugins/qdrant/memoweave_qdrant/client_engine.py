"""``qdrant-client`` engine: local mode (``path`` or ``:memory:``) or a Qdrant server.

Local mode keeps a whole folder under one exclusive file lock (one client per folder per
machine) and ignores payload indexes except text indexes with BM25 scoring; a server gets
keyword indexes on the scope and status keys and a float index on the expiry key as well.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any
from uuid import UUID

from memoweave.providers.vector_store import Metric
from memoweave.runtime.aio import awaitable
from memoweave.runtime.steps import Steps, blocking, call
from memoweave_qdrant.config import QdrantStoreConfig
from memoweave_qdrant.engine import Engine, Row, point_id, row_of
from memoweave_qdrant.filters import Clause, Condition, IsEmpty, Match, Range, Substring

_METRICS: dict[str, str] = {"cosine": "Cosine", "dot": "Dot", "euclidean": "Euclid"}


class ClientEngine(Engine):
    """qdrant-client backend built from a validated local or server configuration.

    Each operation is one pipeline over :meth:`client_call`, run with the sync
    ``QdrantClient`` (``search``) or awaited on ``AsyncQdrantClient`` (``asearch``). The
    clients are created on first use, the async one per event loop. In local mode the
    folder (or the ``:memory:`` database) belongs to ONE client, so an engine serves
    either sync or async calls, whichever came first; and since qdrant-client's local
    engine is not thread-safe (concurrent calls corrupt its arrays), sync local calls are
    serialised behind a lock.
    """

    def __init__(self, config: QdrantStoreConfig) -> None:
        from qdrant_client import models

        self._m = models
        self._config = config
        self._name = ""
        self.supports_payload_indexes = config.resolved_mode == "server"
        self._client: Any = None
        self._aclient: Any = None
        self._aclient_loop: Any = None
        self._local_lock = threading.Lock() if not self.supports_payload_indexes else None
        if not self.supports_payload_indexes:
            self._client = self._new_client(sync=True)  # take the folder lock now

    # -- clients ---------------------------------------------------------------------
    def _new_client(self, *, sync: bool) -> Any:
        from qdrant_client import AsyncQdrantClient, QdrantClient

        cls = QdrantClient if sync else AsyncQdrantClient
        config = self._config
        if config.resolved_mode == "server":
            return cls(
                url=config.url,
                api_key=config.api_key.get_secret_value() if config.api_key else None,
                timeout=int(config.timeout) if config.timeout else None,
                prefer_grpc=config.prefer_grpc,
            )
        if config.location is not None:
            return cls(location=config.location)
        return cls(path=config.path)

    def _local_switch(self) -> None:
        """Local mode: hand the folder from the sync client to an async one (the first
        async call of a store nothing has used synchronously yet), else refuse."""
        if self._client is None or self._used_sync:
            raise RuntimeError(
                "qdrant-client local mode serves one client per folder and this store is "
                "already used synchronously; use it from Memory or from AsyncMemory, not both"
            )
        self._client.close()
        self._client = None

    _used_sync = False

    def client_call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``QdrantClient.<method>(*args, **kwargs)``."""
        if self._client is None:
            if not self.supports_payload_indexes and self._aclient is not None:
                raise RuntimeError(
                    "qdrant-client local mode serves one client per folder and this store "
                    "is already used asynchronously; use it from Memory or from "
                    "AsyncMemory, not both"
                )
            self._client = self._new_client(sync=True)
        self._used_sync = True
        if self._local_lock is None:
            return getattr(self._client, method)(*args, **kwargs)
        with self._local_lock:
            return getattr(self._client, method)(*args, **kwargs)

    async def aclient_call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``await AsyncQdrantClient.<method>(*args, **kwargs)`` (a client per loop)."""
        loop = asyncio.get_running_loop()
        if self._aclient is None or self._aclient_loop is not loop:
            if not self.supports_payload_indexes:
                if self._aclient is None:
                    self._local_switch()
                else:
                    raise RuntimeError(
                        "qdrant-client local mode: this store is bound to another event loop"
                    )
            self._aclient = self._new_client(sync=False)
            self._aclient_loop = loop
        return await getattr(self._aclient, method)(*args, **kwargs)

    # -- operations, each one pipeline -----------------------------------------------
    def _open(
        self, name: str, dims: int, metric: Metric, *, create: bool
    ) -> Steps[tuple[int, Metric]]:
        m = self._m
        self._name = name
        if (yield call(self.client_call, "collection_exists", name)):
            info = yield call(self.client_call, "get_collection", name)
            params = info.config.params.vectors
            if isinstance(params, dict):
                params = params.get("")
            reverse = {v: k for k, v in _METRICS.items()}
            distance = (
                params.distance.value if hasattr(params.distance, "value") else params.distance
            )
            return int(params.size), reverse.get(str(distance), str(distance))  # type: ignore[return-value]  # one of the three metrics we create
        if not create:
            raise LookupError(f"collection {name!r} does not exist")
        distance = getattr(m.Distance, _METRICS[metric].upper())
        yield call(
            self.client_call,
            "create_collection",
            name,
            vectors_config=m.VectorParams(size=dims, distance=distance),
        )
        return dims, metric

    def _ensure_indexes(
        self, keyword_fields: Sequence[str], float_fields: Sequence[str], text_field: str | None
    ) -> Steps[None]:
        m = self._m
        info = yield call(self.client_call, "get_collection", self._name)
        schema = info.payload_schema or {}
        if self.supports_payload_indexes:
            wanted = [(key, m.PayloadSchemaType.KEYWORD) for key in keyword_fields]
            wanted += [(key, m.PayloadSchemaType.FLOAT) for key in float_fields]
            for key, field_schema in wanted:
                if key not in schema:
                    yield call(
                        self.client_call,
                        "create_payload_index",
                        self._name,
                        key,
                        field_schema=field_schema,
                        wait=True,
                    )
        if text_field is not None and text_field not in schema:
            params = m.TextIndexParams(type=m.TextIndexType.TEXT, scoring=True)
            yield call(
                self.client_call,
                "create_payload_index",
                self._name,
                text_field,
                field_schema=params,
                wait=True,
            )

    def _upsert(self, points: Sequence[tuple[UUID, list[float], dict[str, Any]]]) -> Steps[None]:
        batch = [
            self._m.PointStruct(id=str(pid), vector=vector, payload=payload)
            for pid, vector, payload in points
        ]
        yield call(self.client_call, "upsert", self._name, points=batch, wait=True)

    def _delete(self, ids: Sequence[UUID]) -> Steps[None]:
        selector = self._m.PointIdsList(points=[str(i) for i in ids])
        yield call(self.client_call, "delete", self._name, points_selector=selector, wait=True)

    def _set_vector(self, id: UUID, vector: list[float]) -> Steps[None]:
        point = self._m.PointVectors(id=str(id), vector=vector)
        yield call(self.client_call, "update_vectors", self._name, points=[point], wait=True)

    def _set_payload(self, id: UUID, payload: dict[str, Any]) -> Steps[None]:
        yield call(
            self.client_call,
            "overwrite_payload",
            self._name,
            payload=payload,
            points=[str(id)],
            wait=True,
        )

    def _search(self, vector: list[float], limit: int, where: Clause | None) -> Steps[list[Row]]:
        response = yield call(
            self.client_call,
            "query_points",
            self._name,
            query=vector,
            query_filter=self._filter(where),
            limit=limit,
            with_payload=True,
        )
        return [row_of(p, score=p.score) for p in response.points]

    def _text_search(
        self, text: str, field: str, limit: int, where: Clause | None
    ) -> Steps[list[Row]]:
        response = yield call(
            self.client_call,
            "query_points",
            self._name,
            query=self._m.TextQuery(text=text),
            using=field,
            query_filter=self._filter(where),
            limit=limit,
            with_payload=True,
        )
        return [row_of(p, score=p.score) for p in response.points]

    def _retrieve(self, ids: Sequence[UUID], with_vectors: bool) -> Steps[list[Row]]:
        records = yield call(
            self.client_call,
            "retrieve",
            self._name,
            ids=[str(i) for i in ids],
            with_payload=True,
            with_vectors=with_vectors,
        )
        return [row_of(r, with_vector=with_vectors) for r in records]

    def _scroll(
        self, where: Clause | None, limit: int, offset: UUID | None
    ) -> Steps[tuple[list[Row], UUID | None]]:
        records, next_offset = yield call(
            self.client_call,
            "scroll",
            self._name,
            scroll_filter=self._filter(where),
            limit=limit,
            offset=str(offset) if offset is not None else None,
            with_payload=True,
        )
        return [row_of(r) for r in records], point_id(next_offset)

    def _count(self, where: Clause | None) -> Steps[int]:
        result = yield call(
            self.client_call, "count", self._name, count_filter=self._filter(where), exact=True
        )
        return int(result.count)

    def _drop(self, name: str) -> Steps[None]:
        yield call(self.client_call, "delete_collection", name)

    def close(self) -> None:
        """Close the sync client (the async one is closed by :meth:`aclose`)."""
        if self._client is not None:
            self._client.close()

    async def aclose(self) -> None:
        """Close both clients."""
        if self._aclient is not None:
            await self._aclient.close()
            self._aclient = None
        self.close()

    open = blocking(_open)
    aopen = awaitable(_open)
    ensure_indexes = blocking(_ensure_indexes)
    aensure_indexes = awaitable(_ensure_indexes)
    upsert = blocking(_upsert)
    aupsert = awaitable(_upsert)
    delete = blocking(_delete)
    adelete = awaitable(_delete)
    set_vector = blocking(_set_vector)
    aset_vector = awaitable(_set_vector)
    set_payload = blocking(_set_payload)
    aset_payload = awaitable(_set_payload)
    search = blocking(_search)
    asearch = awaitable(_search)
    text_search = blocking(_text_search)
    atext_search = awaitable(_text_search)
    retrieve = blocking(_retrieve)
    aretrieve = awaitable(_retrieve)
    scroll = blocking(_scroll)
    ascroll = awaitable(_scroll)
    count = blocking(_count)
    acount = awaitable(_count)
    drop = blocking(_drop)
    adrop = awaitable(_drop)

    # -- filters ---------------------------------------------------------------------
    def _filter(self, where: Clause | None) -> Any:
        return None if where is None else self._clause(where)

    def _clause(self, clause: Clause) -> Any:
        return self._m.Filter(
            must=[self._cond(c) for c in clause.must] or None,
            should=[self._cond(c) for c in clause.should] or None,
            must_not=[self._cond(c) for c in clause.must_not] or None,
        )

    def _cond(self, cond: Condition) -> Any:
        m = self._m
        if isinstance(cond, Clause):
            return self._clause(cond)
        if isinstance(cond, Match):
            return m.FieldCondition(key=cond.key, match=m.MatchValue(value=cond.value))
        if isinstance(cond, Range):
            rng = m.Range(gt=cond.gt, gte=cond.gte, lt=cond.lt, lte=cond.lte)
            return m.FieldCondition(key=cond.key, range=rng)
        if isinstance(cond, Substring):
            return m.FieldCondition(key=cond.key, match=m.MatchSubstring(substring=cond.text))
        if isinstance(cond, IsEmpty):
            return m.IsEmptyCondition(is_empty=m.PayloadField(key=cond.key))
        raise TypeError(f"unknown condition {cond!r}")
