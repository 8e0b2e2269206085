"""The ``sqlite-vec`` vector store: memoweave's contract on one SQLite file.

See :mod:`memoweave.providers.vector_store` for the contract and
:mod:`memoweave_sqlite_vec.connection` for the layout. Search is exact: the filter runs as
SQL on the indexed columns and the payload JSON (:mod:`memoweave_sqlite_vec.filters`), and
sqlite-vec scores every matching row (``vec_distance_cosine`` / ``vec_distance_l2``),
sorted and cut in SQLite. Vectors are stored as float32. Keyword search is not native:
memoweave's core keyword index (SQLite FTS5 beside the history) serves it, per scope.

Several processes may open the same file: every write is one ``BEGIN IMMEDIATE``
transaction, every read one statement on a consistent snapshot.
"""

from __future__ import annotations

import json
import math
import re
import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from memoweave.errors import NotFound, VectorStoreError
from memoweave.filters import compile_filter
from memoweave.filters.ast import FilterNode
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
from memoweave_sqlite_vec.config import SqliteVecStoreConfig
from memoweave_sqlite_vec.connection import guarded, open_connection, transaction
from memoweave_sqlite_vec.filters import COLUMNS, Translation, column_values, translate

T = TypeVar("T")
_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")
_NAME_RULE = "Use 1-200 letters, digits, '_', '-' or '.', not starting with '-' or '.'."
_CURSOR = "sv1:"
_CHUNK = 500  # ids per IN (...) list
_UPSERT = (
    f"INSERT INTO mw_records (collection, id, {', '.join(COLUMNS)}, mw_other, payload, vector, "
    f"norm) VALUES (?, ?, {', '.join('?' * len(COLUMNS))}, ?, ?, ?, ?) "
    f"ON CONFLICT (collection, id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in (*COLUMNS, "mw_other", "payload", "vector", "norm"))
)


class SqliteVecStore(VectorStore):
    """A memoweave vector store in one SQLite file, searched by sqlite-vec."""

    def __init__(self, config: SqliteVecStoreConfig) -> None:
        self.config = config
        self.capabilities = StoreCapabilities(
            keyword_search=False, persistent=config.path != ":memory:"
        )
        self._where = config.path
        self._lock = threading.RLock()
        self._name: str | None = None
        self._dims = 0
        self._metric: Metric = "cosine"
        self._closed = False
        self._conn = guarded("open", self._where, lambda: open_connection(config))

    # -- plumbing ------------------------------------------------------------------------

    def _call(self, action: str, fn: Callable[[], T]) -> T:
        with self._lock:
            if self._closed:
                raise closed("sqlite-vec")
            return guarded(action, self._where, fn)

    def _bound(self) -> str:
        if self._closed:
            raise closed("sqlite-vec")
        if self._name is None:
            raise not_bound("sqlite-vec")
        return self._name

    def _rows(self, sql: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
        return self._call("read", lambda: list(self._conn.execute(sql, params)))

    def _filter(self, filter: FilterNode | None) -> tuple[Translation, Callable[[Payload], bool]]:
        where = translate(filter)
        keep = (lambda _payload: True) if where.exact else compile_filter(filter)
        return where, keep

    # -- contract ------------------------------------------------------------------------

    def ensure_collection(self, name: str, dims: int, metric: Metric = "cosine") -> None:
        """Create or open ``name`` and bind to it; ``VectorStoreError`` on a dims/metric clash."""
        check_collection_name(name, _NAME_RE, _NAME_RULE)
        check_dims(dims)
        check_metric(metric)

        def open_collection() -> tuple[int, str]:
            with transaction(self._conn):
                self._conn.execute(
                    "INSERT OR IGNORE INTO mw_collections (name, dims, metric) VALUES (?, ?, ?)",
                    (name, dims, metric),
                )
                return next(
                    self._conn.execute(
                        "SELECT dims, metric FROM mw_collections WHERE name = ?", (name,)
                    )
                )

        actual = self._call("open collection", open_collection)
        if tuple(actual) != (dims, metric):
            raise VectorStoreError(
                f"collection {name!r} exists with dims={actual[0]} metric={actual[1]!r}, "
                f"asked for dims={dims} metric={metric!r}",
                hint="Use the collection's dims and metric, or drop it / pick another name.",
                details={"collection": name},
            )
        self._name, self._dims, self._metric = name, dims, metric

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Insert or replace ``records`` in one transaction (idempotent by id)."""
        name = self._bound()
        rows = []
        for record in check_records(records, self._dims):
            blob, norm = _blob(record.vector)
            columns, other = column_values(record.payload)
            text = json.dumps(record.payload, ensure_ascii=False, allow_nan=False)
            rows.append((name, record.id, *columns, other, text, blob, norm))
        if rows:
            self._call("upsert", lambda: self._write(_UPSERT, rows))

    def _write(self, sql: str, rows: Sequence[tuple[object, ...]]) -> None:
        with transaction(self._conn):
            self._ensure_registered()
            self._conn.executemany(sql, rows)

    def _ensure_registered(self) -> None:
        """Inside a write: recreate the bound collection if ``drop_collection`` removed it."""
        self._conn.execute(
            "INSERT OR IGNORE INTO mw_collections (name, dims, metric) VALUES (?, ?, ?)",
            (self._name, self._dims, self._metric),
        )

    def search(
        self, vector: Sequence[float], *, top_k: int = 10, filter: FilterNode | None = None
    ) -> list[SearchHit]:
        """The ``top_k`` most similar records matching ``filter``, best first (exact)."""
        name = self._bound()
        check_positive(top_k, "top_k")
        query, qnorm = _blob(check_vector(vector, self._dims, "query vector"))
        where, keep = self._filter(filter)
        score, score_params = self._score_sql(query, qnorm)
        sql = (
            f"SELECT id, payload, {score} AS score FROM mw_records "
            f"WHERE collection = ? AND {where.sql} ORDER BY score DESC, id LIMIT ?"
        )
        limit = top_k
        while True:
            rows = self._rows(sql, [*score_params, name, *where.params, limit])
            hits = []
            for memory_id, text, value in rows:
                payload = json.loads(text)
                if keep(payload):
                    hits.append(SearchHit(memory_id, float(value), payload))
            if len(hits) >= top_k or len(rows) < limit:
                return hits[:top_k]
            limit *= 4

    def _score_sql(self, query: bytes, qnorm: float) -> tuple[str, list[object]]:
        """The score expression of the bound metric (higher is better) and its params."""
        if self._metric == "euclidean":
            return "-vec_distance_l2(vector, ?)", [query]
        if qnorm == 0.0:
            return "0.0", []
        cosine = "CASE WHEN norm = 0 THEN 0.0 ELSE 1.0 - vec_distance_cosine(vector, ?) END"
        if self._metric == "cosine":
            return cosine, [query]
        return f"({cosine}) * norm * ?", [query, qnorm]

    def get(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[StoredRecord]:
        """The existing records among ``ids``, in the order asked."""
        name = self._bound()
        wanted = check_ids(ids)
        found: dict[str, StoredRecord] = {}
        columns = "id, payload, vector" if with_vectors else "id, payload, NULL"
        unique = list(dict.fromkeys(wanted))
        for lo in range(0, len(unique), _CHUNK):
            chunk = unique[lo : lo + _CHUNK]
            rows = self._rows(
                f"SELECT {columns} FROM mw_records WHERE collection = ? "
                f"AND id IN ({', '.join('?' * len(chunk))})",
                [name, *chunk],
            )
            for memory_id, text, blob in rows:
                vector = array("f", blob).tolist() if blob is not None else None
                found[memory_id] = StoredRecord(memory_id, json.loads(text), vector)
        return [found[i] for i in wanted if i in found]

    def delete(self, ids: Sequence[str]) -> None:
        """Delete ``ids``; missing ids are ignored."""
        name = self._bound()
        wanted = check_ids(ids)
        if wanted:
            rows = [(name, i) for i in dict.fromkeys(wanted)]
            self._call(
                "delete",
                lambda: self._write("DELETE FROM mw_records WHERE collection = ? AND id = ?", rows),
            )

    def update(
        self, id: str, *, vector: Sequence[float] | None = None, payload: Payload | None = None
    ) -> None:
        """Replace the vector and/or the whole payload of ``id``; ``NotFound`` if missing."""
        name = self._bound()
        check_id(id)
        sets: list[str] = []
        params: list[object] = []
        if vector is not None:
            blob, norm = _blob(check_vector(vector, self._dims))
            sets += ["vector = ?", "norm = ?"]
            params += [blob, norm]
        if payload is not None:
            checked = check_payload(payload)
            columns, other = column_values(checked)
            sets += [f"{c} = ?" for c in COLUMNS] + ["mw_other = ?", "payload = ?"]
            params += [*columns, other, json.dumps(checked, ensure_ascii=False, allow_nan=False)]

        def apply() -> int:
            with transaction(self._conn):
                exists = list(
                    self._conn.execute(
                        "SELECT 1 FROM mw_records WHERE collection = ? AND id = ?", (name, id)
                    )
                )
                if exists and sets:
                    self._conn.execute(
                        f"UPDATE mw_records SET {', '.join(sets)} WHERE collection = ? AND id = ?",
                        [*params, name, id],
                    )
                return len(exists)

        if not self._call("update", apply):
            raise NotFound(f"record {id} does not exist", details={"id": id})

    def list(
        self, *, filter: FilterNode | None = None, limit: int = 100, cursor: str | None = None
    ) -> Page:
        """One page of matching records in id order; the cursor names the last id returned."""
        self._bound()
        check_positive(limit, "limit")
        after = _decode_cursor(cursor)
        records: list[StoredRecord] = []
        for record in self._matching(filter, after, limit + 1):
            if len(records) == limit:
                return Page(records, _CURSOR + records[-1].id)
            records.append(record)
        return Page(records, None)

    def _matching(
        self, filter: FilterNode | None, after: str | None, page: int
    ) -> Iterator[StoredRecord]:
        """Every record matching ``filter`` with an id after ``after``, in id order."""
        name = self._bound()
        where, keep = self._filter(filter)
        while True:
            since = "AND id > ? " if after is not None else ""
            rows = self._rows(
                f"SELECT id, payload FROM mw_records WHERE collection = ? {since}AND {where.sql} "
                "ORDER BY id LIMIT ?",
                [name, *([after] if after is not None else []), *where.params, page],
            )
            for memory_id, text in rows:
                payload = json.loads(text)
                if keep(payload):
                    yield StoredRecord(memory_id, payload)
            if len(rows) < page:
                return
            after = rows[-1][0]

    def count(self, *, filter: FilterNode | None = None) -> int:
        """Exact number of records matching ``filter``."""
        name = self._bound()
        where, _ = self._filter(filter)
        if not where.exact:
            return sum(1 for _ in self._matching(filter, None, 1000))
        rows = self._rows(
            f"SELECT COUNT(*) FROM mw_records WHERE collection = ? AND {where.sql}",
            [name, *where.params],
        )
        return int(rows[0][0])

    def drop_collection(self) -> None:
        """Delete the bound collection; it is recreated empty on next use."""
        name = self._bound()

        def drop() -> None:
            with transaction(self._conn):
                self._conn.execute("DELETE FROM mw_records WHERE collection = ?", (name,))
                self._conn.execute("DELETE FROM mw_collections WHERE name = ?", (name,))

        self._call("drop collection", drop)

    def close(self) -> None:
        """Close the connection (other processes keep theirs). Idempotent."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()


def _decode_cursor(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    if isinstance(cursor, str) and cursor.startswith(_CURSOR) and len(cursor) > len(_CURSOR):
        return cursor[len(_CURSOR) :]
    raise invalid_cursor(cursor)


def _blob(vector: list[float]) -> tuple[bytes, float]:
    """A checked vector as sqlite-vec's float32 blob, and its norm."""
    floats = array("f", vector)
    return floats.tobytes(), math.hypot(*floats)
