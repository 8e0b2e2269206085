"""What the embedder and the cross-encoder share: importing the runtime, opening an
onnxruntime session, reading a tokenizer and padding a batch of encodings."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from memoweave.errors import MemoweaveError
from memoweave_onnx.int8_tables import gather_before_dequantize


def import_runtime(error: type[MemoweaveError]) -> tuple[Any, Any, Any]:
    """Import numpy, onnxruntime and tokenizers, or raise ``error``."""
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


def load_session(ort: Any, path: Path, threads: int, error: type[MemoweaveError]) -> Any:
    """An onnxruntime CPU session of ``path`` with ``threads`` intra-op threads.

    Int8 embedding tables are looked up before they are dequantised
    (:mod:`memoweave_onnx.int8_tables`: same vectors, no float32 copy of the table). The
    CPU memory arena is off: it keeps the peak of every batch for the session's life
    (+80 MB after a few queries with MiniLM, hundreds of MB after long batches), at
    about the same speed without it (bench/README.md). The heap the model loader freed
    is handed back to the system (glibc keeps ~60 MB of it otherwise).
    """
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.enable_cpu_mem_arena = False
    # Idle intra-op threads sleep instead of spinning: a spinning pool burns a core
    # between calls and slows everything else on a shared machine (bench/README.md).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        model: bytes | str = str(path)
        with open(path, "rb") as handle:
            model = gather_before_dequantize(handle.read()) or model
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise error(
            f"onnxruntime could not load {path}: {exc}",
            hint="Check that the config points at a valid ONNX model file.",
            details={"reason": "bad_model", "path": str(path)},
        ) from exc
    # onnxruntime keeps the bytes a session was built from (22 MB here) for a fallback to
    # other providers that a CPU-only session never makes; its own source calls that bad.
    session.disable_fallback()
    if isinstance(getattr(session, "_model_bytes", None), bytes):
        session._model_bytes = None
    del model
    release_freed_heap()
    return session


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
