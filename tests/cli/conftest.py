"""Fixtures of the CLI tests: a YAML config on the core's persistent ``memory`` store and
the real ``onnx`` embedder (skipped, with the reason, when that plugin is not installed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memoweave.cli.main import main
from memoweave.plugins import load_registry

Invoke = Callable[..., Result]


def _onnx_installed() -> bool:
    return any(info.name == "onnx" for info in load_registry().list("embedder"))


@pytest.fixture(scope="session")
def cli_onnx_available() -> None:
    if not _onnx_installed():
        pytest.skip("the onnx embedder plugin (memoweave-onnx) is not installed")


@pytest.fixture
def cli_config(tmp_path: Path, cli_onnx_available: None) -> Path:
    """A configuration whose data all lives under ``tmp_path``."""
    path = tmp_path / "memoweave.yaml"
    path.write_text(
        "vector_store:\n"
        "  provider: memory\n"
        f"  config: {{path: {json.dumps(str(tmp_path / 'store'))}}}\n"
        "embedder:\n"
        "  provider: onnx\n"
        f"history_db_path: {json.dumps(str(tmp_path / 'history.db'))}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def cli_invoke(cli_config: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Invoke:
    """Run ``memoweave <args> --config <cli_config>``; returns click's ``Result``."""
    monkeypatch.setenv("MEMOWEAVE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def invoke(*args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(main, [*args, "--config", str(cli_config)], input=input)

    return invoke
