"""New memories, history events, messages and writes get time-ordered UUIDv7 ids
(:mod:`memoweave.memory.ids`), so SQLite's indexes take a batch's ids in adjacent pages."""

from __future__ import annotations

import time
import uuid

from memoweave.memory import Memory
from memoweave.memory.ids import new_id


def test_new_ids_are_canonical_unique_version_7_uuids_in_time_order() -> None:
    first = [new_id() for _ in range(2000)]
    time.sleep(0.002)
    later = new_id()
    assert len(set(first)) == len(first)
    for value in (*first[:50], later):
        parsed = uuid.UUID(value)
        assert str(parsed) == value  # lowercase, hyphenated: what check_memory_id accepts
        assert parsed.version == 7
        assert parsed.variant == uuid.RFC_4122
    assert all(later > value for value in first)
    stamp_ms = uuid.UUID(later).int >> 80
    assert abs(stamp_ms - time.time() * 1000) < 60_000


def test_memories_and_their_history_rows_get_ids_that_sort_by_creation(memory: Memory) -> None:
    texts = [f"fact number {n} about the garden" for n in range(20)]
    first = memory.add([{"role": "user", "content": t} for t in texts], user_id="u", infer=False)
    time.sleep(0.002)
    second = memory.add("I water the roses on Sundays.", user_id="u", infer=False)
    old_ids = [r["id"] for r in first["results"]]
    (new,) = [r["id"] for r in second["results"]]
    assert all(uuid.UUID(i).version == 7 for i in [*old_ids, new])
    assert new > max(old_ids)
    events = memory.history(new)
    assert [e["event"] for e in events] == ["ADD"]
    assert uuid.UUID(events[0]["id"]).version == 7
    assert memory.get(old_ids[0])["memory"] == texts[0]
