"""Qdrant Edge engine: one in-process ``EdgeShard`` per collection, in ``<root>/<name>/``.

Layout: ``<root>/<name>/shard/`` holds the shard, ``<root>/<name>/memoweave.json`` its
``dims`` and ``metric`` (the shard API does not report its configuration back). A shard
takes an exclusive lock on its write-ahead log, so a second process (or store) opening the
same collection fails; the store turns that into a clear ``VectorStoreError``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

from memoweave.providers.vector_store import Metric
from memoweave_qdrant.engine import Engine, Row
from memoweave_qdrant.filters import Clause, Condition, IsEmpty, Match, Range, Substring

_META = "memoweave.json"


class EdgeEngine(Engine):
    """Qdrant Edge backend rooted at ``root`` (created on first use)."""

    def __init__(self, root: Path) -> None:
        import numpy
        import qdrant_edge

        self._q = qdrant_edge
        self._np = numpy
        self._root = root
        self._shard: Any = None

    # -- lifecycle -------------------------------------------------------------------
    def open(self, name: str, dims: int, metric: Metric, *, create: bool) -> tuple[int, Metric]:
        q = self._q
        self.close()
        folder = self._root / name
        meta_file = folder / _META
        if meta_file.exists():
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
            self._shard = q.EdgeShard.load(str(folder / "shard"))
            return int(meta["dims"]), meta["metric"]
        if not create:
            raise LookupError(f"collection {name!r} does not exist")
        distance = {"cosine": q.Distance.Cosine, "dot": q.Distance.Dot}.get(
            metric, q.Distance.Euclid
        )
        config = q.EdgeConfig(vectors=q.EdgeVectorParams(size=dims, distance=distance))
        if folder.exists():  # a crash between shard creation and the meta file
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        self._shard = q.EdgeShard.create(str(folder / "shard"), config)
        tmp = folder / (_META + ".tmp")
        tmp.write_text(json.dumps({"dims": dims, "metric": metric}), encoding="utf-8")
        tmp.replace(meta_file)
        return dims, metric

    def ensure_indexes(
        self, keyword_fields: Sequence[str], float_fields: Sequence[str], text_field: str
    ) -> None:
        q = self._q
        existing = set(self._shard.info().payload_schema)
        wanted = [(key, q.PayloadSchemaType.Keyword) for key in keyword_fields]
        wanted += [(key, q.PayloadSchemaType.Float) for key in float_fields]
        for key, schema in wanted:
            if key not in existing:
                self._shard.update(q.UpdateOperation.create_field_index(key, schema))
        if text_field not in existing:
            params = q.TextIndexParams(tokenizer=q.TokenizerType.Multilingual, scoring=True)
            self._shard.update(q.UpdateOperation.create_field_index(text_field, params))

    def drop(self, name: str) -> None:
        self.close()
        shutil.rmtree(self._root / name, ignore_errors=True)

    def close(self) -> None:
        shard, self._shard = self._shard, None
        if shard is not None:
            try:
                shard.flush()
            finally:
                shard.close()

    # -- writes ----------------------------------------------------------------------
    def upsert(self, points: Sequence[tuple[UUID, list[float], dict[str, Any]]]) -> None:
        q = self._q
        batch = [q.Point(pid, vector, payload) for pid, vector, payload in points]
        self._shard.update(q.UpdateOperation.upsert_points(batch))

    def delete(self, ids: Sequence[UUID]) -> None:
        self._shard.update(self._q.UpdateOperation.delete_points(list(ids)))

    def set_vector(self, id: UUID, vector: list[float]) -> None:
        q = self._q
        self._shard.update(q.UpdateOperation.update_vectors([q.PointVectors(id, vector)]))

    def set_payload(self, id: UUID, payload: dict[str, Any]) -> None:
        self._shard.update(self._q.UpdateOperation.overwrite_payload([id], payload))

    # -- reads -----------------------------------------------------------------------
    def search(self, vector: list[float], limit: int, where: Clause | None) -> list[Row]:
        q = self._q
        request = q.QueryRequest(
            limit=limit,
            query=q.Query.Nearest(vector),
            filter=self._filter(where),
            with_payload=True,
        )
        return [_row(p, score=p.score) for p in self._shard.query(request)]

    def text_search(self, text: str, field: str, limit: int, where: Clause | None) -> list[Row]:
        q = self._q
        request = q.QueryRequest(
            limit=limit,
            query=q.TextQuery(field, text),
            filter=self._filter(where),
            with_payload=True,
        )
        return [_row(p, score=p.score) for p in self._shard.query(request)]

    def retrieve(self, ids: Sequence[UUID], with_vectors: bool) -> list[Row]:
        records = self._shard.retrieve(list(ids), with_payload=True, with_vector=with_vectors)
        return [_row(r, with_vector=with_vectors) for r in records]

    def scroll(
        self, where: Clause | None, limit: int, offset: UUID | None
    ) -> tuple[list[Row], UUID | None]:
        request = self._q.ScrollRequest(
            offset=offset, limit=limit, filter=self._filter(where), with_payload=True
        )
        records, next_offset = self._shard.scroll(request)
        return [_row(r) for r in records], _uuid(next_offset)

    def count(self, where: Clause | None) -> int:
        return int(self._shard.count(self._q.CountRequest(filter=self._filter(where), exact=True)))

    # -- filters ---------------------------------------------------------------------
    def _filter(self, where: Clause | None) -> Any:
        return None if where is None else self._clause(where)

    def _clause(self, clause: Clause) -> Any:
        return self._q.Filter(
            must=[self._cond(c) for c in clause.must] or None,
            should=[self._cond(c) for c in clause.should] or None,
            must_not=[self._cond(c) for c in clause.must_not] or None,
        )

    def _cond(self, cond: Condition) -> Any:
        q = self._q
        if isinstance(cond, Clause):
            return self._clause(cond)
        if isinstance(cond, Match):
            # The binding reads a Python bool as the integer 0/1 (bool subclasses int);
            # numpy.bool_ is not an int, so it reaches Qdrant as a JSON boolean.
            value = self._np.bool_(cond.value) if isinstance(cond.value, bool) else cond.value
            return q.FieldCondition(cond.key, match=q.MatchValue(value))
        if isinstance(cond, Range):
            rng = q.RangeFloat(gt=cond.gt, gte=cond.gte, lt=cond.lt, lte=cond.lte)
            return q.FieldCondition(cond.key, range=rng)
        if isinstance(cond, Substring):
            return q.FieldCondition(cond.key, match=q.MatchSubstring(cond.text))
        if isinstance(cond, IsEmpty):
            return q.IsEmptyCondition(cond.key)
        raise TypeError(f"unknown condition {cond!r}")


def _uuid(value: Any) -> UUID | None:
    if value is None or isinstance(value, UUID):
        return value
    return UUID(str(value))


def _row(point: Any, *, score: float = 0.0, with_vector: bool = False) -> Row:
    vector = point.vector if with_vector else None
    if isinstance(vector, dict):  # unnamed vector reported as {"": [...]}
        vector = vector.get("")
    return Row(
        id=_uuid(point.id),  # type: ignore[arg-type]
        payload=dict(point.payload or {}),
        vector=list(vector) if vector is not None else None,
        score=float(score),
    )
