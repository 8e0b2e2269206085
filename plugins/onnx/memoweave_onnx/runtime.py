"""What the embedder and the cross-encoder share: importing the runtime, opening an
onnxruntime session, reading a tokenizer, padding a batch of encodings and handing the
freed C heap back."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memoweave.errors import MemoweaveError
from memoweave.runtime.background import Background
from memoweave_onnx.model_cache import prepare_model
from memoweave_onnx.wire import GraphIO

TELEMETRY_ENV = "ORT_DISABLE_TELEMETRY"
"""onnxruntime's switch: set to ``1`` before it initialises, it records and sends nothing."""


def import_runtime(error: type[MemoweaveError]) -> tuple[Any, Any, Any]:
    """Import numpy, onnxruntime and tokenizers, or raise ``error``.

    onnxruntime's telemetry is turned off: since 1.29 its Linux and macOS builds keep a
    device id and an event cache under ``~/.cache/Microsoft/DeveloperTools`` for upload to
    Microsoft unless ``ORT_DISABLE_TELEMETRY`` is set before it initialises (memoweave
    makes no network call the user did not configure). The variable is set unless the
    user set it; when onnxruntime was imported before (too late for the variable), its
    events are switched off instead."""
    os.environ.setdefault(TELEMETRY_ENV, "1")
    try:
        import numpy
        import onnxruntime
        import tokenizers
    except ImportError as exc:
        raise error(
            f"the onnx plugin's runtime is missing: {exc}",
            hint="pip install memoweave-onnx (onnxruntime, tokenizers, numpy).",
            details={"reason": "missing_dependency"},
        ) from exc
    if os.environ.get(TELEMETRY_ENV) == "1":
        onnxruntime.disable_telemetry_events()
    return numpy, onnxruntime, tokenizers


def load_tokenizer(
    tokenizers: Any, path: Path, max_length: int, error: type[MemoweaveError]
) -> Any:
    """A fast tokenizer from ``path``, unpadded, truncating to ``max_length`` tokens."""
    try:
        tokenizer = tokenizers.Tokenizer.from_file(str(path))
    except Exception as exc:
        raise error(
            f"could not read tokenizer {path}: {exc}",
            hint="Point the config at a Hugging Face tokenizer.json.",
            details={"reason": "bad_tokenizer", "path": str(path)},
        ) from exc
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length)
    return tokenizer


def load_session(
    ort: Any,
    path: Path,
    threads: int,
    error: type[MemoweaveError],
    *,
    staged: bool = True,
    background: bool = False,
    cache_dir: Path | None = None,
) -> StagedSession:
    """An onnxruntime CPU session of ``path`` with ``threads`` intra-op threads: a
    :class:`StagedSession` when ``staged`` and the graph does float arithmetic only
    (:func:`memoweave_onnx.int8_tables.has_integer_arithmetic`), else an optimised one.
    With ``background`` (and a graph whose inputs and outputs :func:`graph_io` reads),
    the session is built on another thread: see :class:`StagedSession`. The model is
    prepared through ``cache_dir`` when one is given (:mod:`memoweave_onnx.model_cache`:
    read and rewritten once, not at every start).

    Int8 embedding tables are looked up before they are dequantised
    (:mod:`memoweave_onnx.int8_tables`: same vectors, no float32 copy of the table). The
    CPU memory arena is off: it keeps the peak of every batch for the session's life
    (+80 MB after a few queries with MiniLM, hundreds of MB after long batches), at
    about the same speed without it (bench/README.md). The heap the model loader freed
    is handed back to the system (glibc keeps ~60 MB of it otherwise).
    """
    try:
        prepared = prepare_model(path, cache_dir)
    except OSError as exc:
        raise _load_error(error, path, exc) from exc
    return StagedSession(
        ort,
        prepared.model,
        threads,
        error,
        path,
        staged=staged and not prepared.integer_arithmetic,
        io=prepared.io,
        background=background and prepared.io is not None,
    )


class StagedSession:
    """An onnxruntime session that starts on the unoptimised graph and switches to the
    optimised one at its second run (every other attribute is the current session's);
    with ``staged`` false, optimised from the start.

    Optimising the graph (constant folding, fusions) is most of a session's start: ~120
    ms CPU of ~170 for the int8 MiniLM, while the unoptimised graph runs a query in ~11
    ms instead of ~5. A one-shot process (``memoweave search``: one query) never pays for
    the optimisation; a long-running one pays it once, in its second run. The two graphs
    give the same outputs up to float rounding (~1e-7 on a pooled, normalised vector).
    """

    def __init__(
        self,
        ort: Any,
        model: bytes | str,
        threads: int,
        error: type[MemoweaveError],
        path: Path,
        *,
        staged: bool,
        io: GraphIO | None = None,
        background: bool = False,
    ) -> None:
        self._ort, self._threads, self._error, self._path = ort, threads, error, path
        self._model: bytes | str | None = model
        self._lock = threading.Lock()
        self._runs = 0
        self.optimized = not staged
        self.io = io
        self._session: Any = None
        # the first session, built on another thread (not a daemon: an exit waits for
        # onnxruntime to finish it) or here
        self._first: Background[None] | None = None
        if background:
            self._first = Background(self._build, name="memoweave-onnx-session", daemon=False)
        else:
            self._build()

    def _build(self) -> None:
        levels = self._ort.GraphOptimizationLevel
        self._session = self._create(
            levels.ORT_ENABLE_ALL if self.optimized else levels.ORT_DISABLE_ALL
        )
        if self.optimized:
            self._model = None
        release_freed_heap()

    def wait(self) -> None:
        """Wait for the first session; raise its build's error if it failed (each time,
        with the build's own traceback)."""
        if self._first is not None:
            self._first.result()

    def run(self, outputs: Any, feed: dict[str, Any]) -> Any:
        self.wait()
        if self._runs and not self.optimized and self._lock.acquire(blocking=False):
            try:  # other threads keep running the unoptimised graph meanwhile
                if not self.optimized:
                    self._session = self._create(self._ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
                    self._model, self.optimized = None, True
                    release_freed_heap()  # the unoptimised session and the model bytes
            finally:
                self._lock.release()
        self._runs += 1
        return self._session.run(outputs, feed)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # not the session's: an attribute set in __init__, missing
            raise AttributeError(name)
        self.wait()
        return getattr(self._session, name)

    def _create(self, level: Any) -> Any:
        ort = self._ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.enable_cpu_mem_arena = False
        options.graph_optimization_level = level
        # Idle intra-op threads sleep instead of spinning: a spinning pool burns a core
        # between calls and slows everything else on a shared machine (bench/README.md).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            session = ort.InferenceSession(self._model, options, providers=["CPUExecutionProvider"])
        except Exception as exc:
            if not self._from_the_file_itself():
                raise _load_error(self._error, self._path, exc) from exc
            try:
                session = ort.InferenceSession(
                    self._model, options, providers=["CPUExecutionProvider"]
                )
            except Exception as again:
                raise _load_error(self._error, self._path, again) from again
        # onnxruntime keeps the bytes a session was built from (22 MB here) for a fallback
        # to other providers that a CPU-only session never makes; its source calls it bad.
        session.disable_fallback()
        if isinstance(getattr(session, "_model_bytes", None), bytes):
            session._model_bytes = None
        return session

    def _from_the_file_itself(self) -> bool:
        """Prepare the model from its own file, in memory, when the session was to be built
        from another file (a cached copy, :mod:`memoweave_onnx.model_cache`, deleted or
        damaged since, e.g. by a cleaned cache folder before a long-running process's
        second run); ``False`` when it already was."""
        if not isinstance(self._model, str) or Path(self._model) in (
            self._path,
            self._path.resolve(),
        ):
            return False
        try:
            self._model = prepare_model(self._path, None).model
        except OSError:
            return False
        return True


def _load_error(error: type[MemoweaveError], path: Path, exc: Exception) -> MemoweaveError:
    return error(
        f"onnxruntime could not load {path}: {exc}",
        hint="Check that the config points at a valid ONNX model file.",
        details={"reason": "bad_model", "path": str(path)},
    )


def release_freed_heap() -> None:
    """Return the C heap's free pages to the system (glibc ``malloc_trim``; elsewhere
    nothing)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return
    trim(0)


class IdleHeapTrim:
    """Hands the C heap's free pages back (:func:`release_freed_heap`) ``delay`` seconds
    after the last call that asked for it (:meth:`request`), at a moment no call runs.

    Without its arena, onnxruntime frees each forward pass's buffers to the C heap, which
    glibc keeps: +45-75 MiB resident after a few batched calls. Trimming at the end of
    every batched call cost 5-30 ms and made the next call fault those pages in again
    (~8,000 minor faults per 100 texts: ~30 ms CPU, 65 ms wall of a ~400 ms call). So a
    burst of calls keeps the heap it reuses, and the trim runs on a thread of its own
    once the burst is over; never while a call is inside :meth:`busy`. Calls that ask for
    no trim (a query: one pass, little freed) do not put it off, so searches that follow
    a burst of writes get the heap back too."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.trims = 0
        """Trims run so far (in this process)."""
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._active = 0
        self._requested_at = 0.0
        self._pending = False
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        """Around a call that uses the heap: no trim starts meanwhile."""
        if self._pid != os.getpid():  # a forked child: no trim thread, maybe a held lock
            self._reset()
        with self._lock:
            self._active += 1
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                if self._pending and self._thread is None:
                    self._thread = threading.Thread(
                        target=self._trim_when_idle, name="memoweave-onnx-trim", daemon=True
                    )
                    self._thread.start()

    def request(self) -> None:
        """Trim ``delay`` seconds from now, unless asked again meanwhile (call it inside
        :meth:`busy`, at the end of the call's work)."""
        with self._lock:
            self._pending = True
            self._requested_at = time.monotonic()

    def _trim_when_idle(self) -> None:
        while True:
            with self._lock:
                left = self._requested_at + self.delay - time.monotonic()
                if left <= 0 and not self._active:
                    self._pending, self._thread = False, None
                    break
            time.sleep(left if left > 0 else _BUSY_POLL)
        release_freed_heap()
        self.trims += 1


_BUSY_POLL = 0.01
"""Seconds between looks for a moment with no call, once a trim is due."""
HEAP_TRIM = IdleHeapTrim(1.0)
"""The process's trim of the heap onnxruntime freed between passes (one C heap, one trim)."""


def batch_feed(np: Any, encodings: list[Any], input_names: set[str]) -> dict[str, Any]:
    """The session inputs of ``encodings`` padded to the longest (``token_type_ids`` only
    when the model takes it)."""
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for row, enc in enumerate(encodings):
        n = len(enc.ids)
        ids[row, :n] = enc.ids
        mask[row, :n] = 1
        types[row, :n] = enc.type_ids
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in input_names:
        feed["token_type_ids"] = types
    return feed
