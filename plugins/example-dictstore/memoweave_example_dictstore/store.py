"""``DictVectorStore``: the smallest complete implementation of the vector store contract.

Records live in plain dicts (one per collection), search is exact and pure Python, filters
are evaluated with memoweave's reference evaluator, and nothing is persisted. Payloads are
deep-copied on the way in and out, so callers can never alias stored state. Not thread-safe.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memoweave.errors import NotFound, VectorStoreError
from memoweave.filters import FilterNode, evaluate
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

if TYPE_CHECKING:
    from memoweave_example_dictstore import DictStoreConfig

METRICS = ("cosine", "dot", "euclidean")


@dataclass
class _Collection:
    dims: int
    metric: str
    vectors: dict[str, list[float]] = field(default_factory=dict)
    payloads: dict[str, Payload] = field(default_factory=dict)


def _score(metric: str, a: Sequence[float], b: Sequence[float]) -> float:
    """The contract's similarity: cosine, dot product, or minus the L2 distance."""
    if metric == "euclidean":
        return -math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    if metric == "dot":
        return dot
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms else 0.0


def _positive(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise VectorStoreError(f"{name} must be a positive int, got {value!r}")
    return value


class DictVectorStore(VectorStore):
    """A vector store on plain dicts; see the module docstring."""

    capabilities = StoreCapabilities(keyword_search=False, persistent=False)

    def __init__(self, config: DictStoreConfig) -> None:
        self.config = config
        self._collections: dict[str, _Collection] = {}
        self._name: str | None = None

    # -- binding --------------------------------------------------------------------------

    def ensure_collection(self, name: str, dims: int, metric: Metric = "cosine") -> None:
        if not isinstance(name, str) or not name:
            raise VectorStoreError(f"collection name must be a non-empty string, got {name!r}")
        _positive(dims, "dims")
        if metric not in METRICS:
            raise VectorStoreError(f"metric must be one of {METRICS}, got {metric!r}")
        existing = self._collections.get(name)
        if existing is None:
            self._collections[name] = _Collection(dims, metric)
        elif (existing.dims, existing.metric) != (dims, metric):
            raise VectorStoreError(
                f"collection {name!r} exists with dims={existing.dims} metric={existing.metric}, "
                f"not dims={dims} metric={metric}",
                hint="Use another collection name or drop the existing collection.",
            )
        self._name = name

    def _coll(self) -> _Collection:
        if self._name is None:
            raise VectorStoreError(
                "the store is not bound to a collection",
                hint="Call ensure_collection(name, dims, metric) first.",
            )
        coll = self._collections.get(self._name)
        if coll is None:
            raise VectorStoreError(
                f"collection {self._name!r} was dropped",
                hint="Call ensure_collection(name, dims, metric) to recreate it.",
            )
        return coll

    def _vector(self, coll: _Collection, vector: Any) -> list[float]:
        if isinstance(vector, (str, bytes)) or not isinstance(vector, Sequence):
            raise VectorStoreError(
                f"a vector must be a list of floats, got {type(vector).__name__}"
            )
        out = [float(x) for x in vector]
        if len(out) != coll.dims or not all(math.isfinite(x) for x in out):
            raise VectorStoreError(f"expected {coll.dims} finite floats, got {len(out)} values")
        return out

    # -- writes ---------------------------------------------------------------------------

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        coll = self._coll()
        staged: dict[str, tuple[list[float], Payload]] = {}
        for rec in records:  # validate everything before changing anything
            if not isinstance(rec, VectorRecord) or not isinstance(rec.id, str) or not rec.id:
                raise VectorStoreError(f"expected VectorRecord with a string id, got {rec!r}")
            if not isinstance(rec.payload, dict):
                raise VectorStoreError(f"record {rec.id}: payload must be a dict")
            staged[rec.id] = (self._vector(coll, rec.vector), copy.deepcopy(rec.payload))
        limit = self.config.max_records
        if limit is not None and len(coll.vectors.keys() | staged.keys()) > limit:
            raise VectorStoreError(
                f"upsert would grow the collection past max_records={limit}",
                hint="Raise max_records in the dictstore config or delete records first.",
            )
        for id, (vector, payload) in staged.items():
            coll.vectors[id], coll.payloads[id] = vector, payload

    def delete(self, ids: Sequence[str]) -> None:
        coll = self._coll()
        for id in ids:
            coll.vectors.pop(id, None)
            coll.payloads.pop(id, None)

    def update(
        self, id: str, *, vector: Sequence[float] | None = None, payload: Payload | None = None
    ) -> None:
        coll = self._coll()
        if id not in coll.vectors:
            raise NotFound(f"no record with id {id!r} in collection {self._name!r}")
        new_vector = self._vector(coll, vector) if vector is not None else None
        if payload is not None and not isinstance(payload, dict):
            raise VectorStoreError("payload must be a dict")
        if new_vector is not None:
            coll.vectors[id] = new_vector
        if payload is not None:
            coll.payloads[id] = copy.deepcopy(payload)

    def drop_collection(self) -> None:
        self._coll()  # raises if unbound
        del self._collections[self._name]  # type: ignore[arg-type]  # binding stays

    # -- reads ----------------------------------------------------------------------------

    def _matching(self, coll: _Collection, filter: FilterNode | None) -> list[str]:
        return sorted(i for i, p in coll.payloads.items() if evaluate(filter, p))

    def search(
        self, vector: Sequence[float], *, top_k: int = 10, filter: FilterNode | None = None
    ) -> list[SearchHit]:
        coll = self._coll()
        query = self._vector(coll, vector)
        _positive(top_k, "top_k")
        scored = [
            (_score(coll.metric, query, coll.vectors[i]), i) for i in self._matching(coll, filter)
        ]
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return [SearchHit(i, s, copy.deepcopy(coll.payloads[i])) for s, i in scored[:top_k]]

    def get(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[StoredRecord]:
        coll = self._coll()
        return [
            StoredRecord(
                i, copy.deepcopy(coll.payloads[i]), list(coll.vectors[i]) if with_vectors else None
            )
            for i in ids
            if i in coll.payloads
        ]

    def list(
        self, *, filter: FilterNode | None = None, limit: int = 100, cursor: str | None = None
    ) -> Page:
        coll = self._coll()
        _positive(limit, "limit")
        if cursor is not None and not (isinstance(cursor, str) and cursor.startswith("after:")):
            raise VectorStoreError(f"invalid cursor {cursor!r}", hint="Pass back next_cursor.")
        after = cursor[len("after:") :] if cursor else None
        ids = [i for i in self._matching(coll, filter) if after is None or i > after]
        page = [StoredRecord(i, copy.deepcopy(coll.payloads[i])) for i in ids[:limit]]
        return Page(page, f"after:{page[-1].id}" if len(ids) > limit else None)

    def count(self, *, filter: FilterNode | None = None) -> int:
        return len(self._matching(self._coll(), filter))

    def close(self) -> None:
        """Nothing to release; idempotent."""
