"""The write path of a Qdrant Edge collection over its partitions (:class:`.PartitionSet`):
where a written point goes, and where the copy it replaces is.

A point lives in exactly one partition, the one of its ``user_id`` (:mod:`.edge_routing`).
An upsert writes each point in its partition and deletes the copy a ``user_id`` change
left in another one; a write by id (delete, set_vector, set_payload) finds the partition
holding the id.

Finding them: the caller may say what each id holds now (:meth:`PartitionWrites.expect`,
the store's ``expect_writes``: the core's journaled writes do, from the records they read
under their claim on the ids, and a new memory's fresh id holds nothing). Such a hint is
used once, by the next write of the id, and checked: an id said to hold a payload is
looked for in that payload's partition only, and when it is not there the write falls
back to asking every partition; an id said to hold nothing is looked for nowhere. Without
a hint an upsert asks every other partition for a stale copy, and a write by id asks the
loaded partitions first and loads the others only while ids are still missing. A write
that fails forgets every hint (the rollback that follows looks everywhere).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from uuid import UUID

from memoweave_qdrant.edge_partitions import PartitionSet
from memoweave_qdrant.edge_shard import LoadedShard

Point = tuple[UUID, list[float], dict[str, Any]]
MAX_HINTS = 100_000
"""Hints kept at most (more are dropped, unused: they only save look-ups)."""


class PartitionWrites:
    """The writes of the collection whose partitions are ``parts``."""

    def __init__(self, parts: PartitionSet) -> None:
        self._parts = parts
        self._hints: dict[UUID, int | None] = {}
        """The partition each id's next write finds it in (None: it is stored nowhere)."""
        self._hinting = threading.Lock()

    def expect(self, stored: Mapping[UUID, Mapping[str, Any] | None]) -> None:
        """The next write of each id of ``stored`` finds it holding that payload (None:
        no point has the id); see the module docstring."""
        parts = self._parts
        if parts.count == 1:
            return
        hints = {pid: None if p is None else parts.home(p) for pid, p in stored.items()}
        with self._hinting:
            if len(self._hints) + len(hints) > MAX_HINTS:
                self._hints.clear()
            self._hints.update(hints)

    def upsert(self, points: Sequence[Point]) -> None:
        """Insert or replace ``points``, leaving no copy of any in another partition."""
        parts = self._parts
        if parts.count == 1:
            parts.ensure(0).upsert(points)
            return
        hints = self._take(pid for pid, _, _ in points)
        try:
            held = self._held(hints)
            homes: dict[int, list[Point]] = {}
            for point in points:
                homes.setdefault(parts.home(point[2]), []).append(point)
            for p, group in homes.items():
                parts.ensure(p).upsert(group)
            moved: dict[int, list[UUID]] = {}
            unknown: dict[int, list[UUID]] = {}
            for p, group in homes.items():
                for pid, _, _ in group:
                    if pid in held:
                        if held[pid] != p:
                            moved.setdefault(held[pid], []).append(pid)
                    elif pid not in hints or hints[pid] is not None:
                        unknown.setdefault(p, []).append(pid)
            for q, pids in moved.items():
                self._part(q).delete(pids)
            if unknown:
                self._sweep(unknown)
        except BaseException:
            self._forget()
            raise

    def _sweep(self, homes: Mapping[int, Sequence[UUID]]) -> None:
        """Delete the copies of the ids of ``homes`` (by the partition they were just
        written in) that any other partition holds."""
        parts = self._parts
        for p in parts.loaded_first():
            elsewhere = [pid for q, pids in homes.items() if q != p for pid in pids]
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
        """The partitions holding ``ids``, each with its ids: a hinted id is looked for
        in its hinted partition; the others (and a hinted id not found there) in the
        loaded partitions first, then in the others, loaded only while ids are missing."""
        parts = self._parts
        if parts.count == 1:
            part = parts.get(0)
            return [(part, list(ids))] if part is not None and ids else []
        try:
            held = self._held(self._take(ids))
            found: dict[int, list[UUID]] = {}
            for pid, p in held.items():
                found.setdefault(p, []).append(pid)
            located = [(self._part(p), pids) for p, pids in found.items()]
            missing = {pid for pid in ids if pid not in held}
            for p in parts.loaded_first():
                if not missing:
                    break
                part = parts.get(p)
                here = part.present(sorted(missing)) if part is not None else set()
                if part is not None and here:
                    located.append((part, sorted(here)))
                    missing -= here
            return located
        except BaseException:
            self._forget()
            raise

    def _held(self, hints: Mapping[UUID, int | None]) -> dict[UUID, int]:
        """The hinted ids found in the partition their hint names, with it."""
        asked: dict[int, list[UUID]] = {}
        for pid, p in hints.items():
            if p is not None:
                asked.setdefault(p, []).append(pid)
        held: dict[UUID, int] = {}
        for p, pids in asked.items():
            part = self._parts.get(p)
            for pid in part.present(pids) if part is not None else ():
                held[pid] = p
        return held

    def _part(self, p: int) -> LoadedShard:
        part = self._parts.get(p)
        if part is None:
            raise RuntimeError(f"partition {p} vanished while it was written")
        return part

    def _take(self, ids: Iterable[UUID]) -> dict[UUID, int | None]:
        """The hints of ``ids``, removed (each is used once)."""
        with self._hinting:
            return {pid: self._hints.pop(pid) for pid in ids if pid in self._hints}

    def _forget(self) -> None:
        with self._hinting:
            self._hints.clear()
