"""The int8 tables rewrite and the session options, against the real onnxruntime and model."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from memoweave_onnx._resources import cross_encoder_dir, model_file
from memoweave_onnx.int8_tables import gather_before_dequantize, has_integer_arithmetic

from memoweave.plugins import load_registry

TEXTS = ["What instrument does Mateo play?", "Caroline moved to Berlin in May 2023.", ""]


def _session(model: bytes | str) -> Any:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def _feed(rows: int, width: int, seed: int) -> dict[str, Any]:
    ids = np.random.default_rng(seed).integers(0, 30522, (rows, width)).astype(np.int64)
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": ids * 0}


def test_the_rewritten_default_model_gives_bit_identical_hidden_states() -> None:
    """Gathering int8 rows before dequantising is the same float32 arithmetic: every
    output, for any ids (all of the table's range, long inputs), is bit for bit equal."""
    path = model_file(None)
    rewritten = gather_before_dequantize(path.read_bytes())
    assert rewritten is not None, "the packaged model's tables are no longer rewritten"
    original, served = _session(str(path)), _session(rewritten)
    for rows, width, seed in [(1, 9, 0), (4, 40, 1), (2, 256, 2)]:
        feed = _feed(rows, width, seed)
        assert np.array_equal(original.run(None, feed)[0], served.run(None, feed)[0])


def test_the_embedder_serves_the_same_vectors_as_the_model_file() -> None:
    embedder = load_registry().create("embedder", "onnx", {})
    try:
        embedder.embed(TEXTS[:1])  # past the unoptimised first run (see the test below)
        got = embedder.embed(TEXTS)
        embedder._session = _session(str(model_file(None)))  # the file as shipped
        assert embedder.embed(TEXTS) == got
    finally:
        embedder.close()


def test_models_without_such_tables_or_unreadable_bytes_are_left_alone() -> None:
    cross_encoder, _ = cross_encoder_dir(None)
    assert gather_before_dequantize(cross_encoder.read_bytes()) is None  # other quantisation
    whole = model_file(None).read_bytes()
    for broken in (b"", b"\xff" * 12, whole[: len(whole) // 2]):
        assert gather_before_dequantize(broken) is None
        assert has_integer_arithmetic(broken)  # unknown: treated as integer arithmetic


def test_integer_arithmetic_is_told_apart_from_float_graphs() -> None:
    """The cross-encoder quantises activations (its optimised graph rounds differently),
    the MiniLM export only stores int8 weights and computes in float32."""
    cross_encoder, _ = cross_encoder_dir(None)
    assert has_integer_arithmetic(cross_encoder.read_bytes())
    assert not has_integer_arithmetic(model_file(None).read_bytes())


def test_the_session_runs_without_the_memory_arena() -> None:
    """onnxruntime's CPU arena keeps the peak of every batch for the session's life."""
    embedder = load_registry().create("embedder", "onnx", {})
    try:
        assert embedder._session.get_session_options().enable_cpu_mem_arena is False
    finally:
        embedder.close()


def test_the_default_embedder_holds_no_float32_copy_of_its_tables() -> None:
    """Resident anonymous memory added by the default embedder and 40 queries, in a new
    process: ~64 MiB; 154 with the float32 table (47 MB), the arena and the loader's freed
    heap, 86 with the model bytes onnxruntime keeps for a provider fallback (22 MB)."""
    script = textwrap.dedent(
        """
        import numpy, onnxruntime, tokenizers
        from memoweave.plugins import load_registry

        def anon():
            status = open("/proc/self/status").read()
            return int(status.split("RssAnon:")[1].split()[0]) / 1024

        registry = load_registry()
        before = anon()
        embedder = registry.create("embedder", "onnx", {})
        for i in range(40):
            embedder.embed([f"what did the user say about topic {i}?"], purpose="query")
        print(anon() - before)
        """
    )
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc")
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert float(out.strip().splitlines()[-1]) < 80


def test_the_session_starts_unoptimised_and_optimises_at_its_second_run() -> None:
    """A one-shot process embeds its query on the graph that starts fastest; the second
    run switches to the optimised graph, with the same vectors up to float rounding."""
    embedder = load_registry().create("embedder", "onnx", {})
    try:
        session = embedder._session
        level = ort.GraphOptimizationLevel
        assert session.get_session_options().graph_optimization_level == level.ORT_DISABLE_ALL
        first = embedder.embed(TEXTS[:1], purpose="query")
        assert not session.optimized
        second = embedder.embed(TEXTS[:1], purpose="query")
        assert session.optimized
        assert session.get_session_options().graph_optimization_level == level.ORT_ENABLE_ALL
        assert np.allclose(first, second, rtol=0, atol=1e-6)
        assert embedder.embed(TEXTS) == embedder.embed(TEXTS)  # stable once optimised
    finally:
        embedder.close()
