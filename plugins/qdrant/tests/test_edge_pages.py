"""Qdrant Edge's pages read once at load (issue 14): its write-ahead log and the storage
of the appendable segment's payload indexes are not kept resident after the shard loads
or after an optimisation pass, and no write is lost for it (real shard, real process
exit without a close). The segment files a load reads whole are read ahead before it:
Qdrant Edge drops their page cache once loaded, so without the advice every new process
faults them in again one page at a time (page cache checked with ``mincore``)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from memoweave_qdrant.edge_pages import drop_cached_pages, prefetch_loaded, read_ahead_bytes

from memoweave.filters import parse_filter
from memoweave.providers.vector_store import VectorRecord

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="/proc/self/smaps and madvise"
)
DIMS = 16
SCOPE = parse_filter({"user_id": "u"})


def _records(count: int, start: int = 0) -> list[VectorRecord]:
    vectors = np.random.default_rng(start).standard_normal((count, DIMS)).astype(np.float32)
    return [
        VectorRecord(str(uuid.UUID(int=n + 1)), v.tolist(), {"user_id": "u", "n": n})
        for n, v in enumerate(vectors, start)
    ]


def _closed_shard(qdrant_make_store: Any, tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """A store config and its collection's shard folder, holding ``_records(300)``, closed."""
    config = {"partitions": 1, "path": str(tmp_path / "edge")}
    store = qdrant_make_store(config)
    store.ensure_collection("c", DIMS)
    store.upsert(_records(300))
    store.close()
    return config, tmp_path / "edge" / "c" / "shard"


def mapped_kb(
    shard: Path, kind_of: Callable[[Path, bool], str | None], kinds: tuple[str, ...]
) -> dict[str, int]:
    """Resident KiB of this process's mappings under ``shard`` (from /proc/self/smaps),
    by the kind ``kind_of(path, shared)`` gives each mapped file (None: not counted)."""
    out = dict.fromkeys(kinds, 0)
    kind = None
    root = shard.resolve()
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            fields = line.split()
            if not line[0].isupper() or not fields[0].endswith(":"):  # a mapping's header
                path = Path(fields[5]) if len(fields) > 5 else None
                inside = path is not None and path.is_relative_to(root)
                kind = kind_of(path, fields[1][3:4] == "s") if path and inside else None
            elif fields[0] == "Rss:" and kind is not None:
                out[kind] += int(fields[1])
    return out


def _resident_kb(shard: Path) -> dict[str, int]:
    """Resident KiB of this process's mappings under ``shard``: its log, the payload
    indexes' gridstores (folders with a ``tracker.dat``), everything else."""
    root = shard.resolve()

    def kind_of(path: Path, shared: bool) -> str:
        rel = path.relative_to(root).parts
        if rel[0] == "wal":
            return "wal"
        if "payload_index" in rel and (path.parent / "tracker.dat").exists():
            return "gridstore"
        return "other"

    return mapped_kb(shard, kind_of, ("wal", "gridstore", "other"))


def test_opening_keeps_nothing_of_the_log_and_index_storage_it_read(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    """Loading reads the log up to its end and each payload index's gridstore in full (4
    MiB a field, whatever it holds); none of it stays mapped once the shard is open."""
    config, shard = _closed_shard(qdrant_make_store, tmp_path)
    records = _records(300)

    again = qdrant_make_store(config)
    again.ensure_collection("c", DIMS)
    resident = _resident_kb(shard)
    assert resident["wal"] == resident["gridstore"] == 0, resident
    assert again.count() == 300
    hits = again.search(records[5].vector, top_k=1, filter=SCOPE)
    assert hits[0].id == records[5].id
    again.upsert(_records(20, start=300))  # the log and the indexes take writes as before
    assert again.count(filter=SCOPE) == 320
    again.close()
    last = qdrant_make_store(config)
    last.ensure_collection("c", DIMS)
    assert last.count(filter=SCOPE) == 320
    assert last.get([records[7].id])[0].payload["n"] == 7


def test_a_store_told_the_process_exits_skips_only_the_resident_memory_advice(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    """``expect_exit`` (the command line's process, before its command): the shard opened
    next keeps the log and index storage its load read mapped and releases nothing after
    a search; reads and writes are the same, and a store not told releases as ever."""
    config, shard = _closed_shard(qdrant_make_store, tmp_path)
    records = _records(300)

    told = qdrant_make_store(config)
    told.expect_exit()
    told.ensure_collection("c", DIMS)
    assert _resident_kb(shard)["wal"] > 0  # left mapped: the exit releases it
    assert told.search(records[5].vector, top_k=1, filter=SCOPE)[0].id == records[5].id
    assert told._engine.shards.loaded[0]._searched is None  # no release after a search
    told.upsert(_records(20, start=300))
    assert told.count(filter=SCOPE) == 320
    told.close()

    again = qdrant_make_store(config)
    again.ensure_collection("c", DIMS)
    assert _resident_kb(shard)["wal"] == 0
    assert again._engine.shards.loaded[0]._searched is not None
    assert again.count(filter=SCOPE) == 320
    assert again.get([records[7].id])[0].payload["n"] == 7
    again.close()


_WRITER = """
import json, sys, uuid
import numpy as np
sys.path.insert(0, {tests!r})
from test_edge_pages import _records, _resident_kb
from pathlib import Path
from memoweave.plugins import load_registry
store = load_registry().create("vector_store", "qdrant", {config!r})
store.ensure_collection("c", 16)
store.upsert(_records(900))  # past the 4 KB threshold: optimised and flushed
after_optimise = _resident_kb(Path({shard!r}))
store.upsert(_records(50, start=900))  # logged after the release, never flushed
print(json.dumps(after_optimise), flush=True)
import os
os._exit(0)  # no close, no flush: only the log holds the last 50
"""


def _run_writer(script: str, config: dict[str, Any], shard: Path) -> dict[str, int]:
    """Run ``script`` (a template of ``tests``, ``config`` and ``shard``) in a new Python
    process that exits without closing its store; the resident KiB it printed."""
    source = script.format(tests=str(Path(__file__).parent), config=config, shard=str(shard))
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    resident: dict[str, int] = json.loads(done.stdout)
    return resident


def test_a_writer_releases_its_log_after_an_optimisation_and_loses_nothing(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    # float32: every vector must come back exactly as written
    config = {
        "partitions": 1,
        "path": str(tmp_path / "edge"),
        "index_threshold_kb": 4,
        "vector_datatype": "float32",
    }
    resident = _run_writer(_WRITER, config, tmp_path / "edge" / "c" / "shard")
    assert resident["wal"] == 0
    store = qdrant_make_store(config)
    store.ensure_collection("c", DIMS)
    assert store.count() == 950
    for record in (_records(900)[3], _records(50, start=900)[49]):
        (got,) = store.get([record.id], with_vectors=True)
        assert got.payload == record.payload
        assert np.allclose(got.vector, record.vector, atol=1e-6)


_CHECKER = """
import json, sys
sys.path.insert(0, {tests!r})
from test_edge_pages import _records, _resident_kb
from pathlib import Path
from memoweave.plugins import load_registry
store = load_registry().create("vector_store", "qdrant", {config!r})
store.ensure_collection("c", 16)
store.upsert(_records(300))  # checked (a first write is), nothing to optimise
assert store._engine.shards.loaded[0]._shard.info().indexed_vectors_count == 0
after_check = _resident_kb(Path({shard!r}))
store.upsert(_records(10, start=300))  # logged after the release, never flushed
print(json.dumps(after_check), flush=True)
import os
os._exit(0)  # no close, no flush: only the log holds every point
"""


def test_a_writer_releases_its_log_at_each_optimisation_check_and_loses_nothing(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    """A check that finds nothing to optimise (the tail under the threshold) releases
    the log written so far too."""
    config = {
        "partitions": 1,
        "path": str(tmp_path / "edge"),
        "index_threshold_kb": 64,
    }  # 1,024 vectors
    resident = _run_writer(_CHECKER, config, tmp_path / "edge" / "c" / "shard")
    assert resident["wal"] == 0
    store = qdrant_make_store(config)
    store.ensure_collection("c", DIMS)
    assert store.count() == 310
    got = store.get([_records(310)[k].id for k in (0, 299, 309)])
    assert [r.payload["n"] for r in got] == [0, 299, 309]


def _cached_pages(path: Path) -> int:
    """Pages of ``path`` in the page cache (``mincore`` over a private mapping of it,
    which reads nothing)."""
    import ctypes
    import mmap

    size = path.stat().st_size
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    pages = ctypes.create_string_buffer((size + mmap.PAGESIZE - 1) // mmap.PAGESIZE)
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_COPY) as m:
        start = ctypes.c_char.from_buffer(m)
        try:
            assert libc.mincore(ctypes.addressof(start), size, pages) == 0, ctypes.get_errno()
        finally:
            del start
    return sum(byte & 1 for byte in pages.raw)


def test_opening_keeps_the_page_cache_the_next_process_loads_from(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    """The log's mappings are released, not its page cache: the next process to load the
    shard (every ``memoweave search``) reads it from memory, not from disk."""
    config, shard = _closed_shard(qdrant_make_store, tmp_path)
    logs = [p for p in (shard / "wal").iterdir() if p.is_file() and p.stat().st_size]
    for log in logs:
        log.read_bytes()  # in the page cache, as a previous process's load left it
    cached = {log: _cached_pages(log) for log in logs}
    assert all(cached.values()), cached
    again = qdrant_make_store(config)
    again.ensure_collection("c", DIMS)
    assert _resident_kb(shard)["wal"] == 0  # released from this process
    assert {log: _cached_pages(log) for log in logs} == cached  # still cached
    again.close()


def test_only_shared_mappings_of_the_shards_read_once_files_are_released(tmp_path: Path) -> None:
    """A private mapping's written pages exist nowhere else: it is never advised; files
    outside the WAL and the gridstores, and other folders, are left mapped."""
    import contextlib
    import mmap

    from memoweave_qdrant.edge_pages import release_read_once

    shard = tmp_path / "shard"
    (shard / "wal").mkdir(parents=True)
    (shard / "segments" / "s" / "vector_storage").mkdir(parents=True)
    log, other = shard / "wal" / "open-1", shard / "segments" / "s" / "vector_storage" / "m"
    for path in (log, other):
        path.write_bytes(b"\0" * mmap.PAGESIZE * 4)
    with contextlib.ExitStack() as stack:
        log_file = stack.enter_context(open(log, "r+b"))
        other_file = stack.enter_context(open(other, "r+b"))
        private = stack.enter_context(mmap.mmap(log_file.fileno(), 0, flags=mmap.MAP_PRIVATE))
        shared = stack.enter_context(mmap.mmap(log_file.fileno(), 0, flags=mmap.MAP_SHARED))
        kept = stack.enter_context(mmap.mmap(other_file.fileno(), 0, flags=mmap.MAP_SHARED))
        private[:5], shared[5:10], kept[:5] = b"mine!", b"log!!", b"keep!"
        assert release_read_once(shard) == mmap.PAGESIZE * 4  # the shared WAL mapping only
        assert private[:5] == b"mine!"  # its copy-on-write page survived
        assert shared[5:10] == b"log!!" and log.read_bytes()[5:10] == b"log!!"
        assert _resident_kb(shard)["other"] > 0
        assert release_read_once(tmp_path / "missing") == 0


def _loaded_whole(segments: Path) -> list[Path]:
    """The deletion and null-index flags: read into memory by a load, then dropped."""
    return [
        *segments.glob("*/payload_index/*/*/flags_a.dat"),
        *segments.glob("*/vector_storage/deleted/flags_a.dat"),
    ]


def test_prefetch_reads_ahead_what_the_load_reads_and_leaves_the_cold_files(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    segments = _closed_shard(qdrant_make_store, tmp_path)[1] / "segments"
    loaded = _loaded_whole(segments)
    cold = [*segments.glob("*/payload_storage/page_*.dat")]
    assert loaded and cold
    drop_cached_pages(segments)
    assert sum(_cached_pages(path) for path in loaded) == 0  # Qdrant Edge dropped them
    assert prefetch_loaded(segments) > len(loaded)
    for path in loaded:
        assert _cached_pages(path) == -(-path.stat().st_size // 4096), path
    assert sum(_cached_pages(path) for path in cold) == 0  # searches read those in place
    assert prefetch_loaded(tmp_path / "missing") == 0


def test_prefetch_reads_ahead_files_longer_than_one_advice(tmp_path: Path) -> None:
    """Linux reads at most the device's read-ahead size per advice and drops the rest of
    the range: a file several times that long (a big segment's int8 vectors) is read
    ahead whole all the same (one advice read its first 8 MiB here, whatever the wait)."""
    segments = tmp_path / "segments"
    quantized = segments / "s" / "vector_storage" / "quantized.data"
    quantized.parent.mkdir(parents=True)
    chunk = read_ahead_bytes(tmp_path.stat().st_dev)
    size = 3 * chunk + 4096 * 3
    with open(quantized, "wb") as out:
        out.write(os.urandom(size))
        out.flush()
        os.fsync(out.fileno())
        os.posix_fadvise(out.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    assert _cached_pages(quantized) < chunk // 4096
    assert prefetch_loaded(segments) == 1
    # the advice only queues the reads: wait for them (every page, or a generous deadline)
    pages, deadline = -(-size // 4096), time.monotonic() + 30
    while _cached_pages(quantized) < pages and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _cached_pages(quantized) == pages


def test_read_ahead_size_is_the_devices_or_the_default(tmp_path: Path) -> None:
    device = tmp_path.stat().st_dev
    bdi = Path(f"/sys/class/bdi/{os.major(device)}:{os.minor(device)}/read_ahead_kb")
    expected = int(bdi.read_text()) * 1024 if bdi.exists() else 0
    assert read_ahead_bytes(device) == (expected or 128 * 1024)
    assert read_ahead_bytes(os.makedev(4095, 1048575)) == 128 * 1024  # no such device


def test_a_reopened_shard_is_not_faulted_in_page_by_page(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    """Each page a load faults in from outside the page cache is a major fault (4,000+
    for the flags of one small segment); read ahead, the load takes almost none."""
    config, shard = _closed_shard(qdrant_make_store, tmp_path)
    segments = shard / "segments"
    pages = sum(path.stat().st_size // 4096 for path in _loaded_whole(segments))
    assert pages > 1000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
    again = qdrant_make_store(config)
    again.ensure_collection("c", DIMS)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_majflt - before < pages // 10
    assert again.count() == 300
