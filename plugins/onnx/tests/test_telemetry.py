"""onnxruntime's telemetry stays off: an embedder process leaves no device id or event
cache under ``~/.cache/Microsoft`` (onnxruntime >= 1.29 writes both on Linux unless
``ORT_DISABLE_TELEMETRY`` is set before it initialises), unless the user opts in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_EMBED = (
    "from memoweave.plugins import load_registry\n"
    "embedder = load_registry().create('embedder', 'onnx')\n"
    "assert len(embedder.embed(['a short text'])[0]) == 384\n"
    "embedder.close()\n"
)


def _embed_in_new_process(home: Path, **env: str) -> set[str]:
    """Files the process left under ``home/.cache`` (relative paths)."""
    environ = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}
    environ.update({"HOME": str(home), **env})
    done = subprocess.run(
        [sys.executable, "-c", _EMBED], capture_output=True, text=True, timeout=120, env=environ
    )
    assert done.returncode == 0, done.stderr[-2000:]
    cache = home / ".cache"
    return {str(p.relative_to(cache)) for p in cache.rglob("*")} if cache.exists() else set()


def test_an_embedder_process_writes_no_telemetry(tmp_path: Path) -> None:
    assert _embed_in_new_process(tmp_path / "default") == set()


def test_a_user_who_sets_the_variable_keeps_its_value(tmp_path: Path) -> None:
    """ORT_DISABLE_TELEMETRY=0 is the user's choice; this onnxruntime then writes its
    cache (which also shows the first test would see one)."""
    written = _embed_in_new_process(tmp_path / "opted-in", ORT_DISABLE_TELEMETRY="0")
    if not written:
        pytest.skip("this onnxruntime build records no telemetry")
    assert any("onnxruntime" in path for path in written), written
