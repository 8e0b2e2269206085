"""``qdrant-client`` engine: local mode (``path`` or ``:memory:``) or a Qdrant server.

Local mode keeps a whole folder under one exclusive file lock (one client per folder per
machine) and ignores payload indexes except text indexes with BM25 scoring; a server gets
keyword indexes on the scope and status keys and a float index on the expiry key as well.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from memoweave.providers.vector_store import Metric
from memoweave_qdrant.config import QdrantStoreConfig
from memoweave_qdrant.engine import Engine, Row
from memoweave_qdrant.filters import Clause, Condition, IsEmpty, Match, Range, Substring

_METRICS: dict[str, str] = {"cosine": "Cosine", "dot": "Dot", "euclidean": "Euclid"}


class ClientEngine(Engine):
    """qdrant-client backend built from a validated local or server configuration."""

    def __init__(self, config: QdrantStoreConfig) -> None:
        from qdrant_client import QdrantClient, models

        self._m = models
        self._name = ""
        if config.resolved_mode == "server":
            self.supports_payload_indexes = True
            self._client = QdrantClient(
                url=config.url,
                api_key=config.api_key,
                timeout=int(config.timeout) if config.timeout else None,
                prefer_grpc=config.prefer_grpc,
            )
        else:
            self.supports_payload_indexes = False
            if config.location is not None:
                self._client = QdrantClient(location=config.location)
            else:
                self._client = QdrantClient(path=config.path)

    def open(self, name: str, dims: int, metric: Metric, *, create: bool) -> tuple[int, Metric]:
        m = self._m
        self._name = name
        if self._client.collection_exists(name):
            params = self._client.get_collection(name).config.params.vectors
            if isinstance(params, dict):
                params = params.get("")
            reverse = {v: k for k, v in _METRICS.items()}
            distance = (
                params.distance.value if hasattr(params.distance, "value") else params.distance
            )
            return int(params.size), reverse.get(str(distance), str(distance))  # type: ignore[return-value]
        if not create:
            raise LookupError(f"collection {name!r} does not exist")
        distance = getattr(m.Distance, _METRICS[metric].upper())
        self._client.create_collection(
            name, vectors_config=m.VectorParams(size=dims, distance=distance)
        )
        return dims, metric

    def ensure_indexes(
        self, keyword_fields: Sequence[str], float_fields: Sequence[str], text_field: str
    ) -> None:
        m = self._m
        schema = self._client.get_collection(self._name).payload_schema or {}
        if self.supports_payload_indexes:
            wanted = [(key, m.PayloadSchemaType.KEYWORD) for key in keyword_fields]
            wanted += [(key, m.PayloadSchemaType.FLOAT) for key in float_fields]
            for key, field_schema in wanted:
                if key not in schema:
                    self._client.create_payload_index(
                        self._name, key, field_schema=field_schema, wait=True
                    )
        if text_field not in schema:
            params = m.TextIndexParams(type=m.TextIndexType.TEXT, scoring=True)
            self._client.create_payload_index(
                self._name, text_field, field_schema=params, wait=True
            )

    def upsert(self, points: Sequence[tuple[UUID, list[float], dict[str, Any]]]) -> None:
        batch = [
            self._m.PointStruct(id=str(pid), vector=vector, payload=payload)
            for pid, vector, payload in points
        ]
        self._client.upsert(self._name, points=batch, wait=True)

    def delete(self, ids: Sequence[UUID]) -> None:
        selector = self._m.PointIdsList(points=[str(i) for i in ids])
        self._client.delete(self._name, points_selector=selector, wait=True)

    def set_vector(self, id: UUID, vector: list[float]) -> None:
        point = self._m.PointVectors(id=str(id), vector=vector)
        self._client.update_vectors(self._name, points=[point], wait=True)

    def set_payload(self, id: UUID, payload: dict[str, Any]) -> None:
        self._client.overwrite_payload(self._name, payload=payload, points=[str(id)], wait=True)

    def search(self, vector: list[float], limit: int, where: Clause | None) -> list[Row]:
        response = self._client.query_points(
            self._name,
            query=vector,
            query_filter=self._filter(where),
            limit=limit,
            with_payload=True,
        )
        return [_row(p, score=p.score) for p in response.points]

    def text_search(self, text: str, field: str, limit: int, where: Clause | None) -> list[Row]:
        m = self._m
        response = self._client.query_points(
            self._name,
            query=m.TextQuery(text=text),
            using=field,
            query_filter=self._filter(where),
            limit=limit,
            with_payload=True,
        )
        return [_row(p, score=p.score) for p in response.points]

    def retrieve(self, ids: Sequence[UUID], with_vectors: bool) -> list[Row]:
        records = self._client.retrieve(
            self._name, ids=[str(i) for i in ids], with_payload=True, with_vectors=with_vectors
        )
        return [_row(r, with_vector=with_vectors) for r in records]

    def scroll(
        self, where: Clause | None, limit: int, offset: UUID | None
    ) -> tuple[list[Row], UUID | None]:
        records, next_offset = self._client.scroll(
            self._name,
            scroll_filter=self._filter(where),
            limit=limit,
            offset=str(offset) if offset is not None else None,
            with_payload=True,
        )
        return [_row(r) for r in records], _uuid(next_offset)

    def count(self, where: Clause | None) -> int:
        return int(
            self._client.count(self._name, count_filter=self._filter(where), exact=True).count
        )

    def drop(self, name: str) -> None:
        self._client.delete_collection(name)

    def close(self) -> None:
        self._client.close()

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


def _uuid(value: Any) -> UUID | None:
    if value is None or isinstance(value, UUID):
        return value
    return UUID(str(value))


def _row(point: Any, *, score: float = 0.0, with_vector: bool = False) -> Row:
    vector = point.vector if with_vector else None
    if isinstance(vector, dict):
        vector = vector.get("")
    return Row(
        id=_uuid(point.id),  # type: ignore[arg-type]
        payload=dict(point.payload or {}),
        vector=list(vector) if vector is not None else None,
        score=float(score),
    )
