"""The pages searches read from Qdrant Edge's original vectors and payloads (issue 14):
released after each search (real shard; resident memory read from /proc/self/smaps), with
every result and write unchanged, and never advised once a range no longer maps its file
(anonymous memory or another file at the cached address keeps its bytes)."""

from __future__ import annotations

import contextlib
import mmap
import sys
from pathlib import Path
from typing import Any

import pytest
from memoweave_qdrant import edge_pages
from memoweave_qdrant.edge_pages import SearchedPages

sys.path.insert(0, str(Path(__file__).parent))  # the shard helpers, as its writer scripts do
from test_edge_pages import DIMS, SCOPE, _records, mapped_kb

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="/proc/self/smaps, map_files and madvise"
)
PAGE = mmap.PAGESIZE


def _cold_resident_kb(shard: Path) -> dict[str, int]:
    """Resident KiB of this process's shared mappings of the shard's original vectors
    and payloads, by kind."""

    def kind_of(path: Path, shared: bool) -> str | None:
        if not shared:
            return None
        if path.match("vector_storage/matrix.dat"):
            return "vectors"
        return (
            "payloads"
            if path.parent.name == "payload_storage" and path.name.startswith("page_")
            else None
        )

    return mapped_kb(shard, kind_of, ("vectors", "payloads"))


def test_a_search_leaves_none_of_the_vectors_and_payloads_it_read_mapped(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    """An indexed segment's original vectors (scored exactly for every candidate) and
    the payloads of the hits are read in place; after each search but a load's first
    none stays mapped, and searches, reads and writes give the same results as ever."""
    config = {
        "partitions": 1,
        "path": str(tmp_path / "edge"),
        "index_threshold_kb": 4,
    }  # 256 vectors
    store = qdrant_make_store(config)
    store.ensure_collection("c", DIMS)
    records = _records(900)
    store.upsert(records)  # past the threshold: optimised, flushed
    shard = tmp_path / "edge" / "c" / "shard"
    assert [*shard.glob("segments/*/vector_storage/matrix.dat")]  # an indexed segment
    store.close()
    store = qdrant_make_store(config)  # a new load: its first search releases nothing
    store.ensure_collection("c", DIMS)
    assert store.search(records[0].vector, top_k=3, filter=SCOPE)[0].id == records[0].id
    assert _cold_resident_kb(shard)["vectors"] > 0  # a one-shot process exits after it
    for record in records[:40:4]:
        hits = store.search(record.vector, top_k=3, filter=SCOPE)
        assert hits[0].id == record.id and hits[0].payload["n"] == record.payload["n"]
        assert _cold_resident_kb(shard) == {"vectors": 0, "payloads": 0}
    store.upsert(_records(30, start=900))  # writes after releases
    (got,) = store.get([records[11].id])
    assert got.payload == records[11].payload
    assert _cold_resident_kb(shard)["payloads"] > 0  # a read: kept until the next search
    assert store.search(records[11].vector, top_k=1, filter=SCOPE)[0].id == records[11].id
    assert _cold_resident_kb(shard) == {"vectors": 0, "payloads": 0}
    store.close()
    again = qdrant_make_store(config)
    again.ensure_collection("c", DIMS)
    assert again.count(filter=SCOPE) == 930
    assert again.search(records[7].vector, top_k=1, filter=SCOPE)[0].id == records[7].id


def _cold_file(shard: Path, name: str) -> Path:
    path = shard / "segments" / "s" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * PAGE * 4)
    return path


def _address(view: mmap.mmap) -> int:
    import ctypes

    start = ctypes.c_char.from_buffer(view)
    try:
        return ctypes.addressof(start)
    finally:
        del start


def test_only_shared_mappings_of_the_cold_files_are_released(tmp_path: Path) -> None:
    """A private mapping's written pages exist nowhere else: never advised; other files
    of a segment (the int8 vectors, the appendable segment's chunks) stay mapped."""
    shard = tmp_path / "shard"
    vectors = _cold_file(shard, "vector_storage/matrix.dat")
    payloads = _cold_file(shard, "payload_storage/page_0.dat")
    other = _cold_file(shard, "vector_storage/vectors/chunk_0.mmap")
    with contextlib.ExitStack() as stack:
        files = [stack.enter_context(open(p, "r+b")) for p in (vectors, payloads, other)]
        private = stack.enter_context(mmap.mmap(files[0].fileno(), 0, flags=mmap.MAP_PRIVATE))
        shared = [stack.enter_context(mmap.mmap(f.fileno(), 0)) for f in files]
        private[:5], shared[0][:5] = b"mine!", b"vec!!"
        shared[1][:5], shared[2][:5] = b"pay!!", b"keep!"
        assert SearchedPages(shard).release() == 2 * PAGE * 4  # the two shared Cold mappings
        assert _cold_resident_kb(shard) == {"vectors": 0, "payloads": 0}
        assert private[:5] == b"mine!"  # its copy-on-write page survived
        assert shared[0][:5] == b"vec!!" and vectors.read_bytes()[:5] == b"vec!!"
        assert shared[1][:5] == b"pay!!" and payloads.read_bytes()[:5] == b"pay!!"
        assert shared[2][:5] == b"keep!"
    assert SearchedPages(tmp_path / "missing").release() == 0


def test_a_range_that_no_longer_maps_its_file_is_never_advised(tmp_path: Path) -> None:
    """The ranges are read once; if one no longer maps its file (unmapped, and anonymous
    memory or another file mapped at that address since), advising it would throw away
    bytes that exist nowhere else. Such a range is skipped and the mappings read again."""
    shard = tmp_path / "shard"
    vectors = _cold_file(shard, "vector_storage/matrix.dat")
    elsewhere = tmp_path / "elsewhere.dat"
    elsewhere.write_bytes(b"\0" * PAGE * 4)
    pages = SearchedPages(shard)
    with contextlib.ExitStack() as stack:
        anonymous = stack.enter_context(mmap.mmap(-1, PAGE * 4))
        handle = stack.enter_context(open(elsewhere, "r+b"))
        copied = stack.enter_context(mmap.mmap(handle.fileno(), 0, flags=mmap.MAP_PRIVATE))
        anonymous[:5], copied[:5] = b"anon!", b"copy!"
        path = str(vectors.resolve())
        for view in (anonymous, copied):  # as if Qdrant Edge had remapped that address
            start = _address(view)
            pages._ranges = [(start, start + PAGE * 4, path)]
            pages._releases = 1  # not a rescan
            assert pages.release() == 0
            assert pages._ranges is None  # read again at the next release
        assert anonymous[:5] == b"anon!" and copied[:5] == b"copy!"
    with open(vectors, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as shared:
        shared[:5] = b"vec!!"
        assert pages.release() == PAGE * 4  # the mappings read again: the real one
        assert shared[:5] == b"vec!!"


def test_a_mapping_added_after_the_first_release_is_released_at_the_next_rescan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edge_pages, "RESCAN_EVERY", 3)
    shard = tmp_path / "shard"
    vectors = _cold_file(shard, "vector_storage/matrix.dat")
    payloads = _cold_file(shard, "payload_storage/page_0.dat")
    pages = SearchedPages(shard)
    with contextlib.ExitStack() as stack:
        first = stack.enter_context(open(vectors, "r+b"))
        stack.enter_context(mmap.mmap(first.fileno(), 0))
        assert pages.release() == PAGE * 4
        second = stack.enter_context(open(payloads, "r+b"))
        written = stack.enter_context(mmap.mmap(second.fileno(), 0))
        written[:5] = b"pay!!"
        assert [pages.release(), pages.release()] == [PAGE * 4, PAGE * 4]  # cached ranges
        assert pages.release() == 2 * PAGE * 4  # the third: mappings read again
        assert written[:5] == b"pay!!"


def test_nothing_is_advised_where_ranges_cannot_be_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel without ``/proc/self/map_files``, or one that refuses to read it: no
    range can be checked, so none is advised (and the mappings are not read again at
    every search)."""
    shard = tmp_path / "shard"
    vectors = _cold_file(shard, "vector_storage/matrix.dat")
    with open(vectors, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as shared:
        shared[:5] = b"vec!!"
        monkeypatch.setattr(edge_pages, "_MAP_FILES", str(tmp_path / "no-map-files"))
        assert SearchedPages(shard).release() == 0
        assert _cold_resident_kb(shard)["vectors"] > 0
        monkeypatch.undo()

        def refused(path: str) -> str:
            raise PermissionError(path)

        pages = SearchedPages(shard)
        monkeypatch.setattr(edge_pages.os, "readlink", refused)
        assert pages.release() == 0
        assert _cold_resident_kb(shard)["vectors"] > 0
        monkeypatch.setattr(edge_pages, "_mapped", lambda *_: pytest.fail("read again"))
        assert pages.release() == 0
        assert shared[:5] == b"vec!!"
