"""Four processes writing and searching one memoweave home at once, on the sqlite-vec store.

Each worker opens its own ``Memory`` (sqlite-vec vectors + the SQLite history of the same
home) while the others are already writing, adds memories one per call to two shared
scopes and searches them in between. Afterwards every acknowledged memory must be there
(0 lost writes) and no worker may have seen an error. The embedder is the core's hashing
double: the store and the history are what is under test, not the model.
"""

from __future__ import annotations

import multiprocessing
import time
import traceback
from pathlib import Path
from typing import Any

WORKERS = 4
ADDS = 25


def _config(home: Path) -> dict[str, Any]:
    return {
        "vector_store": {"provider": "sqlite-vec", "config": {"path": str(home / "vectors.db")}},
        "history_db_path": str(home / "history.db"),
    }


def _worker(home: str, index: int, out: Any) -> None:
    from memoweave.memory.api import Memory
    from memoweave.testing.doubles import HashingEmbedder

    written: list[str] = []
    errors: list[str] = []
    searches = 0
    time.sleep(0.15 * index)  # open while the earlier workers are mid-write
    try:
        with Memory(_config(Path(home)), embedder=HashingEmbedder(dims=32)) as memory:
            for n in range(ADDS):
                user = f"user|{n % 2}"  # a separator in the id, shared by every worker
                text = f"worker {index} note {n}: the parcel went to depot {n * 7 + index}"
                result = memory.add(text, user_id=user, infer=False)
                written += [r["id"] for r in result["results"] if r["event"] == "ADD"]
                if n % 5 == 4:
                    hits = memory.search(f"parcel depot {n}", user_id=user, top_k=5)
                    assert all(h["user_id"] == user for h in hits["results"])
                    searches += 1
    except Exception:
        errors.append(traceback.format_exc())
    out.put((index, written, searches, errors))


def test_four_processes_share_one_home(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [
        context.Process(target=_worker, args=(str(tmp_path), i, queue)) for i in range(WORKERS)
    ]
    for worker in workers:
        worker.start()
    reports = [queue.get(timeout=240) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0

    errors = [e for _, _, _, errs in reports for e in errs]
    assert errors == [], errors[0]
    written = {memory_id for _, ids, _, _ in reports for memory_id in ids}
    assert len(written) == WORKERS * ADDS
    assert all(searches == ADDS // 5 for _, _, searches, _ in reports)

    from memoweave.memory.api import Memory
    from memoweave.testing.doubles import HashingEmbedder

    with Memory(_config(tmp_path), embedder=HashingEmbedder(dims=32)) as memory:
        stored = set()
        for user in ("user|0", "user|1"):
            page = memory.get_all(user_id=user, top_k=1000)
            stored |= {item["id"] for item in page["results"]}
        missing = written - stored
        assert not missing, f"{len(missing)} acknowledged memories lost"
        assert all(memory.history(i)[0]["event"] == "ADD" for i in list(written)[:10])


def test_the_process_that_created_the_history_may_open_after_others_wrote(
    tmp_path: Path,
) -> None:
    """The first opener creates the history; a second one writes before the first checks
    store against history on its first call. The first must not mistake those memories for
    a lost history (the check reads the history after counting the store)."""
    from memoweave.memory.api import Memory
    from memoweave.testing.doubles import HashingEmbedder

    first = Memory(_config(tmp_path), embedder=HashingEmbedder(dims=32))
    with Memory(_config(tmp_path), embedder=HashingEmbedder(dims=32)) as second:
        written = second.add("the parcel went to depot 7", user_id="alice", infer=False)
    try:
        found = first.get_all(user_id="alice")["results"]
        assert [m["id"] for m in found] == [written["results"][0]["id"]]
    finally:
        first.close()
