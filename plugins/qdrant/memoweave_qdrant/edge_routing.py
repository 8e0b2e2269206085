"""Which partition of a partitioned Qdrant Edge collection holds a point, which ones a
read must ask, and how their answers merge.

A point lives in the partition of its ``user_id`` payload value: a stable hash of the
string (BLAKE2b, the same in every process, unlike ``hash()``) modulo the partition
count. A point whose ``user_id`` is missing or not a string lives in the partition of the
empty key. A read whose filter pins ``user_id`` to one string (every point it keeps has
exactly that value, see :func:`pinned_user`) asks that partition only; any other asks
them all and merges: hits by score, scroll pages in id order, counts summed.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from uuid import UUID

from memoweave_qdrant.engine import Row
from memoweave_qdrant.filters import LISTS_KEY, Clause, Match

ROUTE_KEY = "user_id"
"""The payload key a point's partition follows."""


def partition_of(key: str, partitions: int) -> int:
    """The partition (``0 <= p < partitions``) of routing key ``key``."""
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % partitions


def route_key(payload: Mapping[str, Any]) -> str:
    """The routing key of a stored payload: its ``user_id`` string, else ``""``."""
    value = payload.get(ROUTE_KEY)
    return value if isinstance(value, str) else ""


def pinned_user(where: Clause | None) -> str | None:
    """The ``user_id`` every point ``where`` keeps has (a string, not in a list), or
    ``None`` when the clause does not pin it.

    A pin is a ``must`` chain (from the top clause through nested clauses' ``must``)
    reaching a clause that requires ``Match(user_id, value)`` with ``value`` a string
    and excludes points whose ``user_id`` is a list (``must_not`` holds
    ``Match(LISTS_KEY, "user_id")``), which is what an ``eq`` or one-value ``in`` on
    ``user_id`` translates to. A list-valued ``user_id`` (routed to the empty key) can
    never pass such a clause, so the partition of ``value`` holds every point it keeps."""
    if where is None:
        return None
    not_list = Match(LISTS_KEY, ROUTE_KEY) in where.must_not
    for cond in where.must:
        if isinstance(cond, Match) and cond.key == ROUTE_KEY and isinstance(cond.value, str):
            if not_list:
                return cond.value
        elif isinstance(cond, Clause):
            found = pinned_user(cond)
            if found is not None:
                return found
    return None


def merge_hits(parts: Iterable[list[Row]], limit: int, *, ascending: bool) -> list[Row]:
    """The best ``limit`` rows of several partitions' rankings (each best first):
    highest score first, lowest with ``ascending`` (Euclidean distances); ties by id."""
    rows = [row for part in parts for row in part]
    if ascending:
        rows.sort(key=lambda r: (r.score, r.id))
    else:
        rows.sort(key=lambda r: (-r.score, r.id))
    return rows[:limit]


def merge_pages(
    pages: Sequence[tuple[list[Row], UUID | None]], limit: int
) -> tuple[list[Row], UUID | None]:
    """One scroll page across partitions from each partition's page of ``limit`` rows
    starting at the same offset: the ``limit`` smallest ids, and the next offset (the
    smallest id not returned: a leftover row or a partition's own next offset)."""
    merged = list(heapq.merge(*(rows for rows, _ in pages), key=lambda r: r.id))
    page, rest = merged[:limit], merged[limit:]
    nexts = [nxt for _, nxt in pages if nxt is not None]
    if rest:
        nexts.append(rest[0].id)
    return page, min(nexts) if nexts else None
