"""The embedder's onnxruntime session is built on another thread: construction reads the
model's inputs and width from its bytes, the first run waits for the session, and a
build that fails raises its typed error there. Real models and onnxruntime throughout."""

from __future__ import annotations

import threading
import traceback
from pathlib import Path
from typing import Any

import pytest
from memoweave_onnx import runtime
from memoweave_onnx._resources import cross_encoder_dir, model_file
from memoweave_onnx.config import OnnxEmbedderConfig
from memoweave_onnx.wire import graph_io

from memoweave.errors import EmbeddingError
from memoweave.plugins import load_registry

_MODEL = model_file(OnnxEmbedderConfig().model_path)


def _ort() -> Any:
    return runtime.import_runtime(EmbeddingError)[1]


@pytest.mark.parametrize("kind", ["embedder", "cross-encoder"])
def test_graph_io_reads_what_the_session_reports(kind: str) -> None:
    path = _MODEL if kind == "embedder" else cross_encoder_dir(None)[0]
    ort = _ort()
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    io = graph_io(path.read_bytes())
    assert io is not None
    assert list(io.inputs) == [item.name for item in session.get_inputs()]
    assert io.output_width == session.get_outputs()[0].shape[-1]


def test_graph_io_of_bytes_that_are_no_model_is_none() -> None:
    assert graph_io(b"") is None
    assert graph_io(b"this is not a protobuf") is None
    assert graph_io(_MODEL.read_bytes()[:1000]) is None  # truncated


def test_construction_returns_while_the_session_is_still_building(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release, started = threading.Event(), threading.Event()
    real_create = runtime.StagedSession._create

    def held_create(self: runtime.StagedSession, level: Any) -> Any:
        started.set()
        assert release.wait(10)
        return real_create(self, level)

    monkeypatch.setattr(runtime.StagedSession, "_create", held_create)
    embedder = load_registry().create("embedder", "onnx")  # returns with the build held
    assert started.wait(10) and not release.is_set()
    assert embedder.dims == 384  # from the model bytes, no session yet
    release.set()
    monkeypatch.undo()
    vector = embedder.embed(["a first text waits for the session"])[0]
    reference = load_registry().create("embedder", "onnx")
    reference._session.wait()
    assert vector == reference.embed(["a first text waits for the session"])[0]
    embedder.close()
    reference.close()


def test_a_model_onnxruntime_rejects_fails_at_the_first_embed(tmp_path: Path) -> None:
    """Bytes that parse as an ONNX graph but name an operator onnxruntime lacks: the
    embedder is built (the graph's inputs are fine), its first embed raises the typed
    load error, and so does every later one, with a traceback that does not grow."""
    broken = tmp_path / "model.onnx"
    broken.write_bytes(_MODEL.read_bytes().replace(b"Gather", b"Gathex"))
    embedder = load_registry().create("embedder", "onnx", {"model_path": str(broken)})
    assert embedder.dims == 384
    depths = []
    for _ in range(3):
        with pytest.raises(EmbeddingError) as info:
            embedder.embed(["hello"])
        assert info.value.details["reason"] == "bad_model"
        assert str(broken) in info.value.message
        depths.append(len(traceback.extract_tb(info.value.__traceback__)))
    assert depths[0] == depths[1] == depths[2]
    embedder.close()


def test_the_cross_encoder_builds_its_session_at_construction() -> None:
    reranker = load_registry().create("reranker", "onnx")
    assert reranker._session._first is None  # built here, not on another thread
    assert reranker._session._session is not None
    reranker.close()
