"""What a session needs from an ONNX file, prepared once and kept between starts.

Preparing a model reads its bytes (23 MB for the int8 MiniLM), reads the graph's inputs
and output width (:func:`memoweave_onnx.wire.graph_io`), whether it does integer
arithmetic, and rewrites its int8 embedding tables
(:func:`memoweave_onnx.int8_tables.gather_before_dequantize`): ~40 ms of Python on every
start. The result is kept in a cache folder (default ``$XDG_CACHE_HOME/memoweave/onnx``,
else ``~/.cache/memoweave/onnx``): ``<key>.json`` (what was read) and, when the graph was
rewritten, ``<key>.onnx`` (the rewritten model, which onnxruntime then reads itself on
the session's thread). The key is the file's resolved path, size, mtime, ctime and inode,
:data:`FORMAT` and a digest of the code that prepares it (this module, the rewrite and
the wire reader), so a changed, moved or reinstalled model, or a memoweave-onnx whose
preparation changed, is prepared again. Writes
go to a temporary file renamed into place (two processes preparing at once both write
whole entries); an entry that does not read back whole is a miss. The cache only ever
writes its own entries and removes none (a running process may still read an older one:
a model file that changes leaves its old entry behind); a folder it cannot write is no
error: the model is prepared in memory, as without one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from memoweave_onnx.int8_tables import gather_before_dequantize, has_integer_arithmetic
from memoweave_onnx.wire import GraphIO, graph_io

FORMAT = 1
"""Bumped whenever preparing a model changes (the rewrite, what the entry records)."""


@dataclass(frozen=True)
class PreparedModel:
    """A model file as a session is built from it."""

    model: bytes | str
    """What onnxruntime loads: the rewritten bytes, or a path (the cached rewrite, or the
    file itself when nothing was rewritten)."""
    io: GraphIO | None
    """The graph's inputs and output width, ``None`` when its bytes do not parse."""
    integer_arithmetic: bool
    """Whether the graph computes on integers (then it is never run unoptimised)."""


def default_cache_dir() -> Path | None:
    """``$XDG_CACHE_HOME/memoweave/onnx``, else ``~/.cache/memoweave/onnx``; ``None`` when
    neither is set nor a home folder known (then no cache is kept)."""
    base = os.environ.get("XDG_CACHE_HOME")
    try:
        folder = Path(base).expanduser() if base else Path.home() / ".cache"
    except (RuntimeError, KeyError):  # no HOME and no passwd entry for this user
        return None
    return folder / "memoweave" / "onnx"


def prepare_model(path: Path, cache_dir: Path | None) -> PreparedModel:
    """``path`` prepared for a session: from ``cache_dir`` when it holds this file's entry,
    else read and prepared here (and kept there when it can be). Raises ``OSError`` when
    ``path`` cannot be read."""
    if cache_dir is None:
        return _prepare(path.read_bytes(), path)[0]
    source = path.resolve()
    stat = source.stat()
    key = _key(source, stat)
    found = _read_entry(cache_dir, key, source)
    if found is not None:
        return found
    prepared, rewritten = _prepare(source.read_bytes(), source)
    try:
        return _write_entry(cache_dir, key, source, prepared, rewritten)
    except OSError:  # an unwritable or full cache folder: prepared in memory
        return prepared


def _prepare(raw: bytes, path: Path) -> tuple[PreparedModel, bytes | None]:
    rewritten = gather_before_dequantize(raw)
    prepared = PreparedModel(
        model=rewritten or str(path),
        io=graph_io(raw),
        integer_arithmetic=has_integer_arithmetic(raw),
    )
    return prepared, rewritten


def _key(source: Path, stat: os.stat_result) -> str:
    identity = (FORMAT, str(source), stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
    return hashlib.sha256(repr(identity).encode() + _code_digest()).hexdigest()[:32]


@functools.lru_cache(maxsize=1)
def _code_digest() -> bytes:
    """A digest of the modules that decide what a prepared model holds (~0.1 ms)."""
    from memoweave_onnx import int8_tables, wire

    digest = hashlib.sha256()
    for module in (int8_tables, wire, sys.modules[__name__]):
        digest.update(Path(module.__file__ or "").read_bytes())
    return digest.digest()


def _read_entry(cache_dir: Path, key: str, source: Path) -> PreparedModel | None:
    try:
        entry = json.loads((cache_dir / f"{key}.json").read_text(encoding="utf-8"))
        if entry.get("format") != FORMAT or entry.get("source") != str(source):
            return None
        io = entry["io"]
        graph = None if io is None else GraphIO(tuple(io["inputs"]), io["output_width"])
        model = str(source)
        if entry["rewritten_size"] is not None:
            copy = cache_dir / f"{key}.onnx"
            if copy.stat().st_size != entry["rewritten_size"]:
                return None
            model = str(copy)
        return PreparedModel(model, graph, bool(entry["integer_arithmetic"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_entry(
    cache_dir: Path, key: str, source: Path, prepared: PreparedModel, rewritten: bytes | None
) -> PreparedModel:
    cache_dir.mkdir(parents=True, exist_ok=True)
    model = str(source)
    if rewritten is not None:
        model = str(cache_dir / f"{key}.onnx")
        _write_atomically(Path(model), rewritten)
    io = prepared.io
    entry = {
        "format": FORMAT,
        "source": str(source),
        "io": None if io is None else {"inputs": list(io.inputs), "output_width": io.output_width},
        "integer_arithmetic": prepared.integer_arithmetic,
        "rewritten_size": None if rewritten is None else len(rewritten),
    }
    _write_atomically(cache_dir / f"{key}.json", json.dumps(entry).encode())
    return PreparedModel(model, io, prepared.integer_arithmetic)


def _write_atomically(target: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
