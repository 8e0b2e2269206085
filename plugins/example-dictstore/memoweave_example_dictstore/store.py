"""``DictVectorStore``: the smallest complete implementation of the vector store contract.

Records live in plain dicts (one per collection), search is exact and pure Python, filters
are evaluated with memoweave's reference evaluator, and nothing is persisted. Arguments are
checked with the contract's shared checks (:mod:`memoweave.providers.store_checks`), which
also return the deep copies that are stored, so callers can never alias stored state.
Not thread-safe.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memoweave.errors import NotFound, VectorStoreError
from memoweave.filters import FilterNode, evaluate
from memoweave.providers.checks import check_positive
from memoweave.providers.store_checks import (
    check_collection_name,
    check_dims,
    check_id,
    check_ids,
    check_metric,
    check_payload,
    check_records,
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

if TYPE_CHECKING:
    from memoweave_example_dictstore.config import DictStoreConfig


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


class DictVectorStore(VectorStore):
    """A vector store on plain dicts; see the module docstring."""

    capabilities = StoreCapabilities(keyword_search=False, persistent=False)

    def __init__(self, config: DictStoreConfig) -> None:
        self.config = config
        self._collections: dict[str, _Collection] = {}
        self._name: str | None = None
        self._closed = False

    # -- binding --------------------------------------------------------------------------

    def ensure_collection(self, name: str, dims: int, metric: Metric = "cosine") -> None:
        check_collection_name(name)
        check_dims(dims)
        check_metric(metric)
        if self._closed:
            raise closed("dictstore")
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
        if self._closed:
            raise closed("dictstore")
        if self._name is None:
            raise not_bound("dictstore")
        coll = self._collections.get(self._name)
        if coll is None:
            raise VectorStoreError(
                f"collection {self._name!r} was dropped",
                hint="Call ensure_collection(name, dims, metric) to recreate it.",
            )
        return coll

    # -- writes ---------------------------------------------------------------------------

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        coll = self._coll()
        # validate everything before changing anything (the checks return copies)
        staged = {rec.id: (rec.vector, rec.payload) for rec in check_records(records, coll.dims)}
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
        for id in check_ids(ids):
            coll.vectors.pop(id, None)
            coll.payloads.pop(id, None)

    def update(
        self, id: str, *, vector: Sequence[float] | None = None, payload: Payload | None = None
    ) -> None:
        coll = self._coll()
        new_vector = check_vector(vector, coll.dims) if vector is not None else None
        new_payload = check_payload(payload) if payload is not None else None
        if check_id(id) not in coll.vectors:
            raise NotFound(f"no record with id {id!r} in collection {self._name!r}")
        if new_vector is not None:
            coll.vectors[id] = new_vector
        if new_payload is not None:
            coll.payloads[id] = new_payload

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
        query = check_vector(vector, coll.dims, "query vector")
        check_positive(top_k, "top_k")
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
            for i in check_ids(ids)
            if i in coll.payloads
        ]

    def list(
        self, *, filter: FilterNode | None = None, limit: int = 100, cursor: str | None = None
    ) -> Page:
        coll = self._coll()
        check_positive(limit, "limit")
        if cursor is not None and not (isinstance(cursor, str) and cursor.startswith("after:")):
            raise invalid_cursor(cursor)
        after = cursor[len("after:") :] if cursor else None
        ids = [i for i in self._matching(coll, filter) if after is None or i > after]
        page = [StoredRecord(i, copy.deepcopy(coll.payloads[i])) for i in ids[:limit]]
        return Page(page, f"after:{page[-1].id}" if len(ids) > limit else None)

    def count(self, *, filter: FilterNode | None = None) -> int:
        return len(self._matching(self._coll(), filter))

    def close(self) -> None:
        """Nothing to release; every later call but ``close`` raises. Idempotent."""
        self._closed = True
