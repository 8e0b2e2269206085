"""The small engine interface the store drives, implemented once per Qdrant API.

:class:`memoweave_qdrant.edge_engine.EdgeEngine` talks to Qdrant Edge (``qdrant_edge``),
:class:`memoweave_qdrant.client_engine.ClientEngine` to ``qdrant-client`` (local mode or a
server). Engines work with native UUID point ids, already-encoded payloads (bookkeeping
keys included) and the neutral filter tree of :mod:`memoweave_qdrant.filters`; they do no
validation and may raise any exception (the store maps them to ``VectorStoreError``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from memoweave.providers.vector_store import Metric
from memoweave_qdrant.filters import Clause


@dataclass(frozen=True)
class Row:
    """A point read back from the engine (payload as stored, vector if asked)."""

    id: UUID
    payload: dict[str, Any]
    vector: list[float] | None = None
    score: float = 0.0


def point_id(value: Any) -> UUID | None:
    """A point id as the engines report it (a ``UUID`` or its string; ``None`` kept)."""
    if value is None or isinstance(value, UUID):
        return value
    return UUID(str(value))


def row_of(point: Any, *, score: float = 0.0, with_vector: bool = False) -> Row:
    """The :class:`Row` of a point read back by either Qdrant API (``id``, ``payload``,
    ``vector``: an unnamed vector may be reported as ``{"": [...]}``)."""
    vector = point.vector if with_vector else None
    if isinstance(vector, dict):
        vector = vector.get("")
    return Row(
        id=point_id(point.id),  # type: ignore[arg-type]  # our points have UUID ids
        payload=dict(point.payload or {}),
        vector=list(vector) if vector is not None else None,
        score=float(score),
    )


class Engine(ABC):
    """One Qdrant backend; every method acts on the collection given to :meth:`open`."""

    supports_payload_indexes: bool = True

    @abstractmethod
    def open(self, name: str, dims: int, metric: Metric, *, create: bool) -> tuple[int, Metric]:
        """Open ``name`` (creating it with ``dims``/``metric`` if missing and ``create``).

        Returns the collection's actual ``(dims, metric)``; raises ``LookupError`` if it is
        missing and ``create`` is false.
        """

    @abstractmethod
    def ensure_indexes(
        self, keyword_fields: Sequence[str], float_fields: Sequence[str], text_field: str | None
    ) -> None:
        """Create the missing keyword indexes on ``keyword_fields``, float indexes on
        ``float_fields`` and a BM25 text index on ``text_field`` unless it is ``None``
        (idempotent; an index that exists is kept)."""

    @abstractmethod
    def upsert(self, points: Sequence[tuple[UUID, list[float], dict[str, Any]]]) -> None:
        """Insert or replace points."""

    @abstractmethod
    def search(self, vector: list[float], limit: int, where: Clause | None) -> list[Row]:
        """Nearest points by the collection's metric, engine score in ``Row.score``."""

    @abstractmethod
    def text_search(self, text: str, field: str, limit: int, where: Clause | None) -> list[Row]:
        """BM25 ranking over the text index of ``field``."""

    @abstractmethod
    def retrieve(self, ids: Sequence[UUID], with_vectors: bool) -> list[Row]:
        """The existing points among ``ids`` (any order)."""

    @abstractmethod
    def delete(self, ids: Sequence[UUID]) -> None:
        """Delete points; missing ids are ignored."""

    @abstractmethod
    def set_vector(self, id: UUID, vector: list[float]) -> None:
        """Replace the vector of an existing point."""

    @abstractmethod
    def set_payload(self, id: UUID, payload: dict[str, Any]) -> None:
        """Replace the whole payload of an existing point."""

    @abstractmethod
    def scroll(
        self, where: Clause | None, limit: int, offset: UUID | None
    ) -> tuple[list[Row], UUID | None]:
        """Points in id order from ``offset`` (inclusive); the next offset or ``None``."""

    @abstractmethod
    def count(self, where: Clause | None) -> int:
        """Exact number of points matching ``where``."""

    @abstractmethod
    def drop(self, name: str) -> None:
        """Delete collection ``name`` and its data."""

    @abstractmethod
    def close(self) -> None:
        """Release the engine (idempotent)."""

    def holds(self, where: Clause | None) -> bool | None:
        """Whether any point matches ``where``, where the engine can tell more cheaply
        than a one-point :meth:`scroll`; ``None`` (the default): it cannot."""
        return None

    def expect_reads(self, where: Clause | None) -> None:  # noqa: B027 - optional hint
        """The next reads keep only points matching ``where`` (a hint; the default
        ignores it)."""

    def expect_writes(self, stored: Mapping[UUID, Mapping[str, Any] | None]) -> None:  # noqa: B027
        """The next write of each id of ``stored`` finds it holding that encoded payload
        (``None``: no point has the id); a hint, see
        :meth:`memoweave.providers.vector_store.VectorStore.expect_writes`. The default
        ignores it."""

    def expect_exit(self) -> None:  # noqa: B027 - optional hook, default does nothing
        """The process ends after its current command: skip what only keeps a
        long-running process's resident memory low. The default has nothing to skip."""

    def leave_to_exit(self) -> bool:
        """For a process that ends right after: keep the collection open until then
        instead of closing it, when closing would save nothing; whether it was kept
        (then the engine is done). The default keeps nothing."""
        return False

    def repair(self, name: str) -> list[str]:
        """Repair what stops ``name`` from opening, deleting nothing; one sentence per
        repair. Engines with nothing to repair keep this default."""
        return []
