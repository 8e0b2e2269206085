"""Memory pages of a Qdrant Edge shard: the ones this process does not need resident,
and the ones a shard load is about to read.

Three kinds are released, without changing a byte of any file:

- :func:`drop_cached_pages`: the page cache of the original vectors and payloads (stored
  ``Memory.Cold``) where no mapping uses it. A search reads a few of them at random; the
  kernel maps every cached page around a faulting one (fault-around, 64 KiB), so files
  still in the page cache (a home just copied or written, the segments an optimisation
  just built: Qdrant Edge drops them only when it closes a shard) became resident in
  full: at 100k, 139 instead of 53 MiB of vectors and 50 instead of 25 of payloads after
  120 searches.
  Dropped only where :class:`SearchedPages` cannot release those pages: dropped, every
  search after an open or an optimisation pass reads its pages back from disk.
- :func:`release_read_once`: files Qdrant Edge reads whole when it loads a shard and then
  only appends to. Its write-ahead log (32 MiB segments: the retained closed one is read
  whole to replay it, the open one up to its end) and the storage of the appendable
  segment's payload indexes (``page_*.dat``, ``tracker.dat`` ... of each field: read
  whole into the index's in-memory maps, then only written) stay mapped for the life of
  the shard: ~80 MiB at 100k memories, never read again. This process's mappings of
  them are dropped (``MADV_DONTNEED``: for a shared file mapping the pages stay in the
  file, dirty ones are still written back; a later access maps them again). Their page
  cache is kept: the next process to load the shard reads them again, and with the cache
  dropped every cold start after the first read them from disk (``memoweave search`` at
  10k memories: 28 MB, 8,000 major faults, +0.25-0.5 s). A writer's log pages (written,
  then flushed) are released the same way after each optimisation pass.
- :class:`SearchedPages`: this process's pages of the original vectors and payloads,
  which searches read a few at a time (the vectors of the candidates scored exactly, the
  payloads of the hits) and which stayed mapped: with the page cache they warmed, each
  fault maps its cached neighbours too (fault-around), and a long-running process ends
  up holding most of both files (100k memories: 52 of 73 MiB of vectors and 33 MiB of
  payloads after peer.py's 260 searches, 168-186 MiB file-backed after 200-400).
  Released after every search, the same way (``MADV_DONTNEED``, page cache kept: the
  next search maps what it reads again with minor faults). Released every 8 searches,
  fault-around brought half of them back in between.

And two kinds are read ahead: :func:`prefetch_loaded`, the segment files a load reads
whole into memory (int8 vectors, payload-index maps, the null indexes' and deletions'
flags), whose page cache Qdrant Edge drops once it has read them, so every new process
reads them again, page by page (one major fault per 4 KiB page); and
:func:`prefetch_cold`, the Cold files of the segments an optimisation pass built, whose
page cache Qdrant Edge drops too, so the searches after the pass read them from disk.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path

_COLD_FILES = ("*/vector_storage/matrix.dat", "*/payload_storage/page_*.dat")
"""Qdrant Edge's files of original vectors and payloads in a segments folder."""
_NOT_PREFETCHED = (*_COLD_FILES, "*/vector_storage/vectors/chunk_*.mmap")
"""Segment files a load does not read whole: the Cold files and the appendable segment's
vector chunks (mapped; read in place as searches need them)."""
_MADV_DONTNEED = 4  # Linux
_GRIDSTORE_MARK = "tracker.dat"
"""A payload-index folder holding this file keeps its data in a gridstore (a mutable
index of the appendable segment, loaded into memory when the shard loads)."""


def drop_cached_pages(segments: Path) -> None:
    """Drop the page cache of the segments' original vectors and payloads where no
    mapping uses it (``POSIX_FADV_DONTNEED``: an advice that never changes data; mapped,
    dirty or locked pages stay). ~1 ms for the 12 files of 100k memories."""
    for pattern in _COLD_FILES:
        for path in segments.glob(pattern):
            _advise(str(path), "POSIX_FADV_DONTNEED")


def prefetch_cold(segments: Path, names: set[str]) -> int:
    """Ask the kernel to read the written parts of the Cold files (original vectors,
    payloads) of the segments named ``names`` under ``segments``; returns how many files
    were advised. Holes (the preallocated, never written tail of a payload page file)
    are skipped: read ahead, they would fill the page cache with zeros.

    Qdrant Edge drops the page cache of the segments an optimisation pass builds, so
    without this every search of the next few hundred read its candidates' vectors and
    its hits' payloads from disk a page at a time (100k memories: 39 major faults a
    search); advised once, they are read in large sequential requests."""
    advised = 0
    for pattern in _COLD_FILES:
        for path in segments.glob(pattern):
            if path.parent.parent.name in names and _advise(
                str(path), "POSIX_FADV_WILLNEED", data_only=True
            ):
                advised += 1
    return advised


def segment_names(segments: Path) -> set[str]:
    """The names of the segment folders under ``segments`` (none if it is missing)."""
    try:
        return {entry.name for entry in os.scandir(segments) if entry.is_dir()}
    except OSError:
        return set()


def prefetch_loaded(segments: Path) -> int:
    """Ask the kernel to read the files under ``segments`` (a shard's segments folder)
    that loading the shard reads whole, all but the Cold files and the vector chunks
    (``POSIX_FADV_WILLNEED``: a read-ahead advice, files unchanged); returns how many
    were advised.

    Qdrant Edge drops the page cache of what it loaded into memory, so without this a
    load faults every page of them in again, one at a time: at 10k memories 8,200 major
    faults and 4.7 MB from disk, ~100 ms CPU and 200 wall; advised first, ~25-35 ms of
    read-ahead and a ~45-55 ms load. Each file is advised in chunks the kernel reads
    whole (:func:`read_ahead_bytes`), so a file longer than one advice is read ahead
    entirely. What is advised is read by the load anyway, and Qdrant Edge drops it again
    after."""
    skipped = {str(path) for pattern in _NOT_PREFETCHED for path in segments.glob(pattern)}
    advised = 0
    for folder, _, files in os.walk(segments):
        for name in files:
            path = os.path.join(folder, name)
            if path not in skipped and _advise(path, "POSIX_FADV_WILLNEED"):
                advised += 1
    return advised


def release_read_once(shard: Path) -> int:
    """Release this process's resident pages of the files under ``shard`` (a shard
    folder) that Qdrant Edge read whole at load and will not read again: its WAL and the
    gridstores of payload indexes. Returns the bytes of mappings released (0 where
    ``/proc/self/maps`` or ``madvise`` is missing).

    The caller must hold off every other call on the shard meanwhile: an address read
    from ``/proc/self/maps`` must still be the shard's mapping when it is advised."""
    return _release(shard, _read_once)


class SearchedPages:
    """Releases this process's resident pages of the original vectors and payloads of
    the segments under ``shard`` (a shard folder): the Cold files searches read in place.

    The mappings are read from ``/proc/self/maps`` (~2-3 ms with ~600 mappings) once,
    then every :data:`RESCAN_EVERY` releases (mappings a write added since) or when one
    is gone; each release checks each range still maps its file
    (``/proc/self/map_files``, ~8 us a range) before advising it, so a range Qdrant Edge
    unmapped meanwhile, maybe mapped again to other memory, is never advised. ~0.3 ms a
    release at 100k memories (14 mappings), plus the next search's minor faults."""

    def __init__(self, shard: Path, *, skip_first: bool = False) -> None:
        self._shard = shard
        self._ranges: list[tuple[int, int, str]] | None = None
        self._releases = 0
        self._skip = skip_first
        """Whether the next release does nothing: the first of an engine's, so a process
        that searches once (``memoweave search``, then exits) never pays the first read
        of the mappings (4-19 ms wall at 100k memories, 0.3 ms for the next ones)."""
        self._checkable = os.path.isdir(_MAP_FILES)
        """Whether ranges can be checked (no ``map_files``: nothing is ever advised)."""

    @property
    def active(self) -> bool:
        """Whether releases can advise anything (``/proc/self/map_files`` is readable):
        where they cannot, the Cold files' page cache is what fault-around makes
        resident, and the engine drops it instead (:func:`drop_cached_pages`)."""
        return self._checkable

    def release(self) -> int:
        """Release the pages; the bytes of mappings advised. The caller holds off the
        shard's calls that map or unmap files (load, writes, close); searches may run
        meanwhile (a page released under one is mapped again)."""
        if self._skip or not self._checkable:
            self._skip = False
            return 0
        if self._ranges is None or self._releases % RESCAN_EVERY == 0:
            self._ranges = _mapped(self._shard, _searched)
        self._releases += 1
        madvise = _madvise()
        released = 0
        for start, end, path in self._ranges:
            try:
                same = os.readlink(f"{_MAP_FILES}/{start:x}-{end:x}") == path
            except FileNotFoundError:  # unmapped (or split) since
                same = False
            except OSError:  # not allowed to check: never advise
                self._checkable, self._ranges = False, None
                return released
            if not same:
                self._ranges = None  # read again next time
            elif madvise(start, end - start, _MADV_DONTNEED) == 0:
                released += end - start
        return released


RESCAN_EVERY = 64
"""Releases between two reads of ``/proc/self/maps`` by a :class:`SearchedPages`."""
_MAP_FILES = "/proc/self/map_files"
"""One symbolic link per file mapping, named ``start-end``, to the file it maps."""


def _release(shard: Path, chosen: Callable[[Path, Path], bool]) -> int:
    """``MADV_DONTNEED`` on this process's shared mappings of the files under ``shard``
    that ``chosen(path, resolved shard)`` picks; the bytes of mappings advised."""
    madvise = _madvise()
    released = 0
    for start, end, _ in _mapped(shard, chosen):
        if madvise(start, end - start, _MADV_DONTNEED) == 0:
            released += end - start
    return released


def _mapped(shard: Path, chosen: Callable[[Path, Path], bool]) -> list[tuple[int, int, str]]:
    """``(start, end, path)`` of this process's shared mappings of the files under
    ``shard`` that ``chosen(path, resolved shard)`` picks (none where ``/proc/self/maps``
    is missing)."""
    if not sys.platform.startswith("linux"):  # pragma: no cover - not on this platform
        return []
    root = shard.resolve()
    prefix = str(root) + os.sep
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            lines = maps.read().splitlines()
    except OSError:  # pragma: no cover - no procfs
        return []
    found = []
    for line in lines:
        if prefix not in line:  # most lines: other files, anonymous memory
            continue
        fields = line.split(maxsplit=5)
        # shared mappings only: a private one may hold copied-on-write pages
        if len(fields) < 6 or fields[1][3:4] != "s" or not fields[5].startswith(prefix):
            continue
        if chosen(Path(fields[5]), root):
            start, end = (int(x, 16) for x in fields[0].split("-"))
            found.append((start, end, fields[5]))
    return found


def _searched(path: Path, root: Path) -> bool:
    """Whether ``path`` (a mapped file under ``root``, a resolved shard folder) is one of
    a segment's Cold files (:data:`_COLD_FILES` under ``segments/``)."""
    relative = path.relative_to(root)
    return (
        len(relative.parts) == 4
        and relative.parts[0] == "segments"
        and any(relative.match(pattern) for pattern in _COLD_FILES)
    )


def _read_once(path: Path, root: Path) -> bool:
    """Whether ``path`` (a mapped file under ``root``, a resolved shard folder) is read
    only when the shard loads."""
    parts = path.relative_to(root).parts
    if parts[:1] == ("wal",):
        return True
    # segments/<segment>/payload_index/<field>/<file>
    return (
        len(parts) == 5
        and parts[0] == "segments"
        and parts[2] == "payload_index"
        and (path.parent / _GRIDSTORE_MARK).exists()
    )


@functools.cache
def _madvise() -> Callable[[int, int, int], int]:
    libc = ctypes.CDLL(None, use_errno=True)
    madvise = libc.madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return madvise


def _advise(path: str, advice: str, *, data_only: bool = False) -> bool:
    """Give the kernel ``advice`` (an ``os.POSIX_FADV_*`` name) about all of ``path``
    (with ``data_only``, a read-ahead of its written ranges only: holes skipped);
    whether it was given. ``POSIX_FADV_WILLNEED`` is given in chunks of
    :func:`read_ahead_bytes`: Linux reads at most that much per call and ignores the
    rest of the range."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None:  # pragma: no cover - not on this platform
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # a segment an optimisation removed meanwhile
        return False
    try:
        if advice == "POSIX_FADV_WILLNEED":
            info = os.fstat(fd)
            chunk = read_ahead_bytes(info.st_dev)
            ranges = _data_ranges(fd, info.st_size) if data_only else [(0, info.st_size)]
            for start, end in ranges:
                for offset in range(start, end, chunk):
                    advise(fd, offset, min(chunk, end - offset), os.POSIX_FADV_WILLNEED)
        else:
            advise(fd, 0, 0, getattr(os, advice))
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _data_ranges(fd: int, size: int) -> list[tuple[int, int]]:
    """The ``(start, end)`` byte ranges of the open file ``fd`` (``size`` bytes long)
    that hold data, holes left out (``SEEK_DATA`` / ``SEEK_HOLE``; the whole file where
    the file system cannot tell)."""
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    if seek_data is None or seek_hole is None:  # pragma: no cover - not on this platform
        return [(0, size)]
    ranges: list[tuple[int, int]] = []
    offset = 0
    while offset < size:
        try:
            start = os.lseek(fd, offset, seek_data)
        except OSError as error:
            if error.errno == errno.ENXIO:  # no data past offset
                break
            return [(0, size)]
        end = min(os.lseek(fd, start, seek_hole), size)
        ranges.append((start, end))
        offset = end
    return ranges


_READ_AHEAD_FALLBACK = 128 * 1024
"""Bytes per read-ahead advice where the device's read-ahead size cannot be read (the
kernel's default read-ahead, the least any block device reads per advice)."""


@functools.cache
def read_ahead_bytes(device: int) -> int:
    """The most Linux reads ahead per ``POSIX_FADV_WILLNEED`` call on files of
    ``device`` (an ``st_dev``), as far as this process can tell: the device's read-ahead
    size (``/sys/class/bdi/MAJOR:MINOR/read_ahead_kb``; the kernel reads up to the larger
    of it and the device's largest I/O), else 128 KiB.

    The kernel silently drops the rest of a longer range: advising a whole 15 MiB int8
    vector file at once read its first 8 MiB here (128 KiB on a disk with the default
    read-ahead), and the load faulted in the rest one page at a time (100k memories:
    3,650 major faults, 0.47 s instead of 0.17 of CPU)."""
    bdi = f"/sys/class/bdi/{os.major(device)}:{os.minor(device)}/read_ahead_kb"
    try:
        with open(bdi, encoding="ascii") as size:
            return int(size.read()) * 1024 or _READ_AHEAD_FALLBACK
    except (OSError, ValueError):
        return _READ_AHEAD_FALLBACK
