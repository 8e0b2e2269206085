"""The prepared model kept between starts (memoweave_onnx.model_cache): a warm start reads
neither the model's bytes nor rewrites them, and embeds exactly as a cold one; a changed
model, a damaged or unwritable cache are misses, never errors or stale vectors. Real
models and onnxruntime throughout."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from memoweave_onnx import model_cache
from memoweave_onnx._resources import model_file
from memoweave_onnx.int8_tables import gather_before_dequantize

from memoweave.plugins import load_registry

TEXTS = ["Maya plays the cello in a quartet", "What instrument does Maya play?"]


def _embedder(**config: Any) -> Any:
    return load_registry().create("embedder", "onnx", config)


def _vectors(**config: Any) -> list[list[float]]:
    embedder = _embedder(**config)
    try:
        return embedder.embed(TEXTS)
    finally:
        embedder.close()


@pytest.fixture(scope="module")
def reference() -> list[list[float]]:
    return _vectors(model_cache=False)


def _entries(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def test_a_warm_start_reads_no_model_bytes_and_embeds_the_same(
    tmp_path: Path, reference: list[list[float]], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    assert _vectors(cache_dir=str(cache)) == reference  # cold: prepared, then kept
    [entry] = _entries(cache)
    assert entry["source"] == str(model_file(None).resolve())
    assert entry["io"] == {
        "inputs": ["input_ids", "attention_mask", "token_type_ids"],
        "output_width": 384,
    }
    copy = next(cache.glob("*.onnx"))
    assert copy.stat().st_size == entry["rewritten_size"]
    assert copy.read_bytes() == gather_before_dequantize(model_file(None).read_bytes())

    def no_reading(*args: Any) -> Any:
        raise AssertionError("a warm start prepared the model again")

    monkeypatch.setattr(model_cache, "gather_before_dequantize", no_reading)
    monkeypatch.setattr(model_cache, "graph_io", no_reading)
    warm = _embedder(cache_dir=str(cache))
    assert warm.dims == 384
    assert warm._session._model == str(copy)  # onnxruntime reads the rewrite itself
    assert warm.embed(TEXTS) == reference
    warm.embed(TEXTS)  # the second run builds the optimised graph from the same file
    assert warm._session.optimized
    warm.close()


def test_a_changed_model_file_is_prepared_again(
    tmp_path: Path, reference: list[list[float]]
) -> None:
    cache, model = tmp_path / "cache", tmp_path / "model.onnx"
    shutil.copy(model_file(None), model)
    assert _vectors(cache_dir=str(cache), model_path=str(model)) == reference
    stat = model.stat()
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert _vectors(cache_dir=str(cache), model_path=str(model)) == reference
    assert len(_entries(cache)) == 2  # one entry per version of the file, none removed


@pytest.mark.parametrize("damage", ["truncated_copy", "missing_copy", "bad_json", "old_format"])
def test_a_damaged_entry_is_a_miss(
    tmp_path: Path, reference: list[list[float]], damage: str
) -> None:
    cache = tmp_path / "cache"
    _vectors(cache_dir=str(cache))
    entry, copy = next(cache.glob("*.json")), next(cache.glob("*.onnx"))
    if damage == "truncated_copy":
        copy.write_bytes(copy.read_bytes()[:1000])
    elif damage == "missing_copy":
        copy.unlink()
    elif damage == "bad_json":
        entry.write_text("{not json", encoding="utf-8")
    else:
        entry.write_text(json.dumps({**json.loads(entry.read_text()), "format": 0}))
    assert _vectors(cache_dir=str(cache)) == reference
    assert copy.stat().st_size == json.loads(entry.read_text())["rewritten_size"]  # rewritten


def test_an_unwritable_cache_folder_is_no_error(
    tmp_path: Path, reference: list[list[float]]
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    assert _vectors(cache_dir=str(blocked / "cache")) == reference
    assert blocked.read_text(encoding="utf-8") == "not a folder"


def test_model_cache_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    embedder = _embedder(model_cache=False)
    assert isinstance(embedder._session._model, bytes)  # prepared in memory
    embedder.close()
    assert list(tmp_path.iterdir()) == []
    assert model_cache.default_cache_dir() == tmp_path / "memoweave" / "onnx"


def test_no_known_home_keeps_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process with neither XDG_CACHE_HOME nor a home folder (HOME unset, no passwd
    entry) embeds as usual, with the model prepared in memory."""

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert model_cache.default_cache_dir() is None
    embedder = _embedder()
    assert isinstance(embedder._session._model, bytes)
    assert len(embedder.embed(["hello"])[0]) == 384
    embedder.close()


def test_changed_preparing_code_is_prepared_again(
    tmp_path: Path, reference: list[list[float]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key covers the code that prepares a model: an upgraded rewrite never reads an
    entry an older one wrote."""
    cache = tmp_path / "cache"
    _vectors(cache_dir=str(cache))
    monkeypatch.setattr(model_cache, "_code_digest", lambda: b"another rewrite")
    assert _vectors(cache_dir=str(cache)) == reference
    assert len(_entries(cache)) == 2


def test_a_cached_copy_damaged_in_place_falls_back_to_the_model_file(
    tmp_path: Path, reference: list[list[float]]
) -> None:
    """Same size, other bytes (the entry reads back whole): onnxruntime rejects the copy,
    the session is built from the model file itself, the vectors are the same."""
    cache = tmp_path / "cache"
    _vectors(cache_dir=str(cache))
    copy = next(cache.glob("*.onnx"))
    copy.write_bytes(b"\0" * copy.stat().st_size)
    assert _vectors(cache_dir=str(cache)) == reference


def test_a_copy_removed_under_a_running_process_is_no_error(
    tmp_path: Path, reference: list[list[float]]
) -> None:
    """The optimised session of the second run is built from the file the first one
    came from: a cache folder cleaned meanwhile is no error for a long-running process."""
    cache = tmp_path / "cache"
    _vectors(cache_dir=str(cache))
    embedder = _embedder(cache_dir=str(cache))
    assert embedder.embed(TEXTS) == reference
    shutil.rmtree(cache)
    second = embedder.embed(TEXTS)  # builds the optimised graph
    assert embedder._session.optimized
    for got, want in zip(second, reference, strict=True):
        assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 1e-5
    embedder.close()
