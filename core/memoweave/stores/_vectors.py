"""Row-addressed vector storage with exact similarity scoring for the in-memory store.

:func:`make_table` returns a numpy-backed table when numpy is importable, else a tiny
pure-Python one with the same interface. Rows are appended, overwritten in place, marked
dead, and compacted; scores follow the vector store contract: cosine similarity (0 when a
vector has zero norm), dot product, or minus the L2 distance.
"""

from __future__ import annotations

import base64
import heapq
import math
import sys
from array import array
from collections.abc import Sequence
from typing import Any

try:  # numpy is optional: the pure-Python table below is the fallback
    import numpy as np
except ImportError:  # pragma: no cover - depends on the environment
    np = None  # type: ignore[assignment]  # numpy is optional: the pure-Python table


class _NumpyTable:
    """A growable float64 matrix plus cached squared norms and a live-row mask."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self._reset()

    def _reset(self) -> None:
        self.n = 0
        self._data = np.zeros((16, self.dims))
        self._sq = np.zeros(16)
        self._alive = np.zeros(16, dtype=bool)

    def append(self, vector: Sequence[float]) -> int:
        if self.n == len(self._data):
            grow = len(self._data)
            self._data = np.concatenate([self._data, np.zeros((grow, self.dims))])
            self._sq = np.concatenate([self._sq, np.zeros(grow)])
            self._alive = np.concatenate([self._alive, np.zeros(grow, dtype=bool)])
        self.n += 1
        self.set(self.n - 1, vector)
        return self.n - 1

    def set(self, row: int, vector: Sequence[float]) -> None:
        self._data[row] = vector
        self._sq[row] = float(self._data[row] @ self._data[row])
        self._alive[row] = True

    def kill(self, row: int) -> None:
        self._alive[row] = False

    def get(self, row: int) -> list[float]:
        values: list[float] = self._data[row].tolist()
        return values

    def compact(self, keep: list[int]) -> None:
        if not keep:
            self._reset()
            return
        idx = np.asarray(keep, dtype=np.int64)
        self._data, self._sq = self._data[idx], self._sq[idx]
        self._alive = np.ones(len(keep), dtype=bool)
        self.n = len(keep)

    def top_k(
        self, query: Sequence[float], metric: str, k: int, rows: list[int] | None
    ) -> list[tuple[int, float]]:
        """The ``k`` best ``(row, score)`` among ``rows`` (all live rows if ``None``)."""
        q = np.asarray(query, dtype=np.float64)
        n = self.n
        if rows is None or len(rows) * 4 > n:  # one matrix product over a view beats a gather
            all_scores = _np_scores(self._data[:n], self._sq[:n], q, metric)
            if rows is None:
                idx = np.flatnonzero(self._alive[:n])
            else:
                idx = np.asarray(rows, dtype=np.int64)
            scores = all_scores[idx]
        else:
            idx = np.asarray(rows, dtype=np.int64)
            scores = _np_scores(self._data[idx], self._sq[idx], q, metric)
        if len(idx) == 0:
            return []
        if k < len(idx):
            part = np.argpartition(-scores, k - 1)[:k]
            idx, scores = idx[part], scores[part]
        order = np.lexsort((idx, -scores))[:k]
        return [(int(idx[i]), float(scores[i])) for i in order]

    def dump(self, rows: list[int]) -> str:
        block = self._data[np.asarray(rows, dtype=np.int64)].astype("<f8")
        return base64.b64encode(block.tobytes()).decode("ascii")


def _np_scores(m: Any, sq: Any, q: Any, metric: str) -> Any:
    dots = m @ q
    qq = float(q @ q)
    if metric == "dot":
        return dots
    if metric == "euclidean":
        return -np.sqrt(np.maximum(sq - 2.0 * dots + qq, 0.0))
    denom = np.sqrt(sq) * math.sqrt(qq)
    return np.divide(dots, denom, out=np.zeros_like(dots), where=denom > 0)


class _ListTable:
    """The pure-Python fallback: a list of float lists (``None`` for dead rows)."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self.rows: list[list[float] | None] = []

    @property
    def n(self) -> int:
        return len(self.rows)

    def append(self, vector: Sequence[float]) -> int:
        self.rows.append(list(vector))
        return len(self.rows) - 1

    def set(self, row: int, vector: Sequence[float]) -> None:
        self.rows[row] = list(vector)

    def kill(self, row: int) -> None:
        self.rows[row] = None

    def get(self, row: int) -> list[float]:
        return list(self.rows[row] or ())

    def compact(self, keep: list[int]) -> None:
        self.rows = [self.rows[r] for r in keep]

    def top_k(
        self, query: Sequence[float], metric: str, k: int, rows: list[int] | None
    ) -> list[tuple[int, float]]:
        """The ``k`` best ``(row, score)`` among ``rows`` (all live rows if ``None``)."""
        candidates = range(len(self.rows)) if rows is None else rows
        scored = [
            (r, py_score(v, query, metric)) for r in candidates if (v := self.rows[r]) is not None
        ]
        return heapq.nsmallest(k, scored, key=lambda item: (-item[1], item[0]))

    def dump(self, rows: list[int]) -> str:
        block = array("d", [x for r in rows for x in self.rows[r] or ()])
        if sys.byteorder == "big":  # pragma: no cover - the file format is little-endian
            block.byteswap()
        return base64.b64encode(block.tobytes()).decode("ascii")


def py_score(v: Sequence[float], q: Sequence[float], metric: str) -> float:
    """The contract's similarity of ``v`` to ``q`` in plain Python."""
    if metric == "euclidean":
        return -math.sqrt(sum((a - b) ** 2 for a, b in zip(v, q, strict=True)))
    dot = sum(a * b for a, b in zip(v, q, strict=True))
    if metric == "dot":
        return dot
    denom = math.sqrt(sum(a * a for a in v)) * math.sqrt(sum(b * b for b in q))
    return dot / denom if denom > 0 else 0.0


def load_block(blob: str, dims: int, count: int) -> list[list[float]]:
    """Decode :meth:`dump` output back into ``count`` vectors of ``dims`` floats."""
    flat = array("d")
    flat.frombytes(base64.b64decode(blob.encode("ascii"), validate=True))
    if sys.byteorder == "big":  # pragma: no cover - the file format is little-endian
        flat.byteswap()
    if len(flat) != dims * count:
        raise ValueError(f"vector block holds {len(flat)} floats, expected {dims * count}")
    return [flat[i * dims : (i + 1) * dims].tolist() for i in range(count)]


def make_table(dims: int) -> _NumpyTable | _ListTable:
    """A numpy table when numpy is available, else the pure-Python one."""
    return _NumpyTable(dims) if np is not None else _ListTable(dims)
