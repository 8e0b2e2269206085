"""The write path of a Qdrant Edge collection over its partitions (:class:`.PartitionSet`):
where a written point goes, and where the copy it replaces is.

A point lives in exactly one partition, the one of its ``user_id`` (:mod:`.edge_routing`).
An upsert writes each point in its partition, then deletes the copy a ``user_id`` change
left in another one; a write by id (delete, set_vector, set_payload) finds the partition
holding the id, asking the loaded partitions first and loading the others only while ids
are still missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from memoweave_qdrant.edge_partitions import PartitionSet
from memoweave_qdrant.edge_shard import LoadedShard

Point = tuple[UUID, list[float], dict[str, Any]]


class PartitionWrites:
    """The writes of the collection whose partitions are ``parts``."""

    def __init__(self, parts: PartitionSet) -> None:
        self._parts = parts

    def upsert(self, points: Sequence[Point]) -> None:
        """Insert or replace ``points``, leaving no copy of any in another partition."""
        parts = self._parts
        homes: dict[int, list[Point]] = {}
        for point in points:
            homes.setdefault(parts.home(point[2]), []).append(point)
        for p, group in homes.items():
            parts.ensure(p).upsert(group)
        if parts.count > 1:  # the copies a user_id change left in other partitions
            for p in parts.loaded_first():
                elsewhere = [pid for q, group in homes.items() if q != p for pid, _, _ in group]
                part = parts.get(p) if elsewhere else None
                stale = part.present(elsewhere) if part is not None else set()
                if part is not None and stale:
                    part.delete(sorted(stale))

    def delete(self, ids: Sequence[UUID]) -> None:
        """Delete ``ids``; missing ids are ignored."""
        for part, found in self._locate(ids):
            part.delete(found)

    def set_vector(self, id: UUID, vector: list[float]) -> None:
        """Replace the vector of the existing point ``id``."""
        self._holder(id).set_vector(id, vector)

    def set_payload(self, id: UUID, payload: dict[str, Any]) -> None:
        """Replace the payload; a point whose new ``user_id`` belongs to another
        partition is written there first, then deleted from its old one."""
        part = self._holder(id)
        target = self._parts.ensure(self._parts.home(payload))
        if target is part:
            part.set_payload(id, payload)
            return
        (row,) = part.retrieve([id], True)
        if row.vector is None:
            raise RuntimeError(f"point {id} was read back without its vector")
        target.upsert([(id, row.vector, payload)])
        part.delete([id])

    def _holder(self, id: UUID) -> LoadedShard:
        for part, _ in self._locate([id]):
            return part
        raise LookupError(f"point {id} does not exist")

    def _locate(self, ids: Sequence[UUID]) -> list[tuple[LoadedShard, list[UUID]]]:
        """The partitions holding ``ids``, each with its ids (the loaded ones are asked
        first; the others are loaded only while ids are still missing)."""
        parts = self._parts
        if parts.count == 1:
            part = parts.get(0)
            return [(part, list(ids))] if part is not None and ids else []
        missing, found = set(ids), []
        for p in parts.loaded_first():
            if not missing:
                break
            part = parts.get(p)
            here = part.present(sorted(missing)) if part is not None else set()
            if part is not None and here:
                found.append((part, sorted(here)))
                missing -= here
        return found
