"""One collection of the in-memory store, and its JSON file format.

Rows hold (id, sequence number, payload, vector); a deleted row is a tombstone until more
than half the rows are dead, then the rows are compacted. Sequence numbers only grow, so
they give ``list`` a stable order and a cursor that survives deletions and compaction.

File format (``<dir>/<name>.json``): ``{"format": "memoweave-memory-store/1", "name",
"dims", "metric", "ids", "payloads", "vectors"}`` where ``vectors`` is one base64 block of
little-endian float64, row-major, in ``ids`` order.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memoweave.errors import VectorStoreError
from memoweave.filters.evaluate import Predicate
from memoweave.providers.store_checks import check_id, check_payload
from memoweave.providers.vector_store import TEXT_FIELD, Payload
from memoweave.stores._bm25 import BM25Index
from memoweave.stores._checks import fail
from memoweave.stores._vectors import load_block, make_table

FILE_FORMAT = "memoweave-memory-store/1"
METRICS = ("cosine", "dot", "euclidean")
_COMPACT_AFTER = 1024


class Collection:
    """The rows of one collection plus its BM25 index over ``payload["memory"]``."""

    def __init__(self, name: str, dims: int, metric: str) -> None:
        self.name, self.dims, self.metric = name, dims, metric
        self.table = make_table(dims)
        self.ids: list[str | None] = []
        self.seqs: list[int] = []
        self.payloads: list[Payload | None] = []
        self.row_of: dict[str, int] = {}
        self.bm25 = BM25Index()
        self.next_seq = 0
        self.dead = 0

    def put(self, id: str, vector: Sequence[float], payload: Payload) -> None:
        """Insert a new row, or replace the vector and payload of ``id`` in place."""
        row = self.row_of.get(id)
        if row is None:
            self.row_of[id] = self.table.append(vector)
            self.ids.append(id)
            self.seqs.append(self.next_seq)
            self.payloads.append(payload)
            self.next_seq += 1
        else:
            self.table.set(row, vector)
            self.payloads[row] = payload
        self.index_text(id, payload)

    def index_text(self, id: str, payload: Payload) -> None:
        """(Re)index the keyword text of ``id``."""
        text = payload.get(TEXT_FIELD)
        self.bm25.add(id, text if isinstance(text, str) else "")

    def remove(self, id: str) -> None:
        """Delete ``id`` if present."""
        row = self.row_of.pop(id, None)
        if row is None:
            return
        self.table.kill(row)
        self.ids[row] = self.payloads[row] = None
        self.bm25.remove(id)
        self.dead += 1
        if self.dead > _COMPACT_AFTER and self.dead > len(self.row_of):
            self._compact()

    def _compact(self) -> None:
        keep = self.live_rows()
        self.table.compact(keep)
        self.ids = [self.ids[r] for r in keep]
        self.seqs = [self.seqs[r] for r in keep]
        self.payloads = [self.payloads[r] for r in keep]
        self.row_of = {id: row for row, id in enumerate(self.ids) if id is not None}
        self.dead = 0

    def live_rows(self, predicate: Predicate | None = None) -> list[int]:
        """Rows of live records whose payload satisfies ``predicate``, in order."""
        return [
            row
            for row, payload in enumerate(self.payloads)
            if payload is not None and (predicate is None or predicate(payload))
        ]


def collection_path(directory: Path, name: str) -> Path:
    """Where collection ``name`` is saved."""
    return directory / f"{name}.json"


def encode_collection(coll: Collection) -> dict[str, Any]:
    """The JSON document of ``coll``."""
    rows = coll.live_rows()
    return {
        "format": FILE_FORMAT,
        "name": coll.name,
        "dims": coll.dims,
        "metric": coll.metric,
        "ids": [coll.ids[r] for r in rows],
        "payloads": [coll.payloads[r] for r in rows],
        "vectors": coll.table.dump(rows),
    }


def decode_collection(name: str, doc: Any, path: Path) -> Collection:
    """Rebuild a collection from its document; ``VectorStoreError`` naming ``path`` if corrupt."""
    try:
        if doc.get("format") != FILE_FORMAT:
            raise ValueError(f"not a memoweave memory store file (format {FILE_FORMAT})")
        coll = Collection(name, int(doc["dims"]), str(doc["metric"]))
        if coll.metric not in METRICS:
            raise ValueError(f"unknown metric {coll.metric!r}")
        ids, payloads = doc["ids"], doc["payloads"]
        if len(payloads) != len(ids):
            raise ValueError("ids and payloads differ in length")
        vectors = load_block(doc["vectors"], coll.dims, len(ids))
        for id, vector, payload in zip(ids, vectors, payloads, strict=True):
            check_id(id)
            coll.put(id, vector, check_payload(payload, f"record {id}"))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _corrupt(path, str(exc)) from exc
    return coll


def read_collection(directory: Path, name: str) -> Collection | None:
    """The collection saved as ``<directory>/<name>.json``, or ``None`` if there is none."""
    path = collection_path(directory, name)
    if directory.exists() and not directory.is_dir():
        raise fail(
            f"the memory store path {directory} is not a directory",
            "Set the memory store's path to a directory (it is created if missing).",
            path=str(directory),
        )
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        hint = "Check that the memory store's path is a readable, writable directory."
        raise fail(f"cannot read {path}: {exc}", hint, path=str(path)) from exc
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise _corrupt(path, f"not JSON: {exc}") from exc
    return decode_collection(name, doc, path)


def write_collection(directory: Path, coll: Collection) -> None:
    """Save ``coll`` atomically (temp file, fsync, ``os.replace``).

    Raises ``VectorStoreError`` on failure, leaving the previous file in place.
    """
    path = collection_path(directory, coll.name)
    tmp = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(
                encode_collection(coll),
                fh,
                ensure_ascii=False,
                allow_nan=False,
                separators=(",", ":"),
            )
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except (OSError, ValueError) as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        raise fail(
            f"cannot save collection {coll.name!r} to {path}: {exc}", path=str(path)
        ) from exc


def delete_collection(directory: Path, name: str) -> None:
    """Remove the saved file of collection ``name`` (no error if there is none)."""
    path = collection_path(directory, name)
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise fail(f"cannot delete {path}: {exc}", path=str(path)) from exc


def _corrupt(path: Path, problem: str) -> VectorStoreError:
    return fail(
        f"cannot read collection file {path}: {problem}",
        "Restore the file from a backup, or move it away to start empty.",
        path=str(path),
    )
