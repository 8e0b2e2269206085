"""``memoweave --version`` and ``memoweave plugins`` (table and JSON), plus error output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memoweave import __version__
from memoweave.cli.errors import MemoweaveGroup
from memoweave.cli.main import main
from memoweave.errors import ConfigError

PLUGIN_SITE = Path(__file__).resolve().parents[1] / "fixtures" / "plugin_site"
FIXTURE_PLUGINS = "overlap,dup,broken"


@pytest.fixture
def plugin_site(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fixture distributions on sys.path; only overlap, dup and broken allowed."""
    monkeypatch.delenv("MEMOWEAVE_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.setenv("MEMOWEAVE_PLUGINS", FIXTURE_PLUGINS)
    monkeypatch.syspath_prepend(str(PLUGIN_SITE))
    return PLUGIN_SITE


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"memoweave, version {__version__}"


def test_plugins_table_shows_providers_conflicts_and_failures(plugin_site: Path) -> None:
    result = CliRunner().invoke(main, ["plugins"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    memory = next(line for line in lines if " memory " in line)
    assert "vector_store" in memory
    assert "memoweave " in memory
    solo = next(line for line in lines if " solo " in line)
    assert "memoweave-fixture-dup" in solo
    assert "2.0.0" in solo
    assert sum("overlap (conflict)" in line for line in lines) == 2
    assert "Conflicts" in result.output
    assert (
        "reranker provider 'overlap' is registered by both memoweave-fixture-overlap 1.2.0 "
        "and memoweave-fixture-dup 2.0.0" in result.output
    )
    assert "Plugins not loaded" in result.output
    assert "memoweave-fixture-broken 0.3.0 (plugin 'broken'): ImportError" in result.output


def test_plugins_json_includes_config_schemas(plugin_site: Path) -> None:
    result = CliRunner().invoke(main, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    by_key = {(p["kind"], p["name"], p["distribution"]): p for p in document["providers"]}
    memory = by_key["vector_store", "memory", "memoweave"]
    assert memory["plugin"] == "memoweave.plugins.builtins"
    assert memory["config_schema"]["additionalProperties"] is False
    assert set(memory["config_schema"]["properties"]) == {"path"}
    overlap = by_key["reranker", "overlap", "memoweave-fixture-overlap"]
    assert overlap["version"] == "1.2.0"
    assert set(overlap["config_schema"]["properties"]) == {"lowercase", "min_score"}
    assert document["conflicts"] == [
        {
            "kind": "reranker",
            "name": "overlap",
            "distributions": ["memoweave-fixture-overlap", "memoweave-fixture-dup"],
            "message": "reranker provider 'overlap' is registered by both "
            "memoweave-fixture-overlap 1.2.0 and memoweave-fixture-dup 2.0.0",
        }
    ]
    [failure] = document["failures"]
    assert failure["distribution"] == "memoweave-fixture-broken"
    assert failure["version"] == "0.3.0"


def test_memoweave_errors_print_code_and_hint_and_exit_2() -> None:
    @click.group(cls=MemoweaveGroup)
    def group() -> None:
        pass

    @group.command()
    def fail() -> None:
        raise ConfigError("vector_store.config.uri: required field is missing", hint="Add it.")

    result = CliRunner().invoke(group, ["fail"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "error[config_error]: vector_store.config.uri: required field is missing",
        "hint: Add it.",
    ]


def test_installed_console_script_lists_the_external_plugin(plugin_site: Path) -> None:
    script = shutil.which("memoweave", path=str(Path(sys.executable).parent))
    assert script is not None, "the memoweave console script is not installed in this venv"
    env = {
        **os.environ,
        "PYTHONPATH": str(PLUGIN_SITE),
        "MEMOWEAVE_PLUGINS": "overlap",
    }
    completed = subprocess.run(
        [script, "plugins", "--json"], capture_output=True, text=True, env=env, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    providers = json.loads(completed.stdout)["providers"]
    assert {(p["kind"], p["name"]) for p in providers} == {
        ("vector_store", "memory"),
        ("graph_store", "memory"),
        ("reranker", "overlap"),
        ("reranker", "explode"),
        ("reranker", "notareranker"),
    }


def test_a_plugin_for_another_plugin_api_is_reported_not_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MEMOWEAVE_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.setenv("MEMOWEAVE_PLUGINS", "future,overlap")
    monkeypatch.syspath_prepend(str(PLUGIN_SITE))
    result = CliRunner().invoke(main, ["plugins", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    (failure,) = [f for f in document["failures"] if f["plugin"] == "future"]
    assert failure["distribution"] == "memoweave-fixture-future"
    assert "plugin API 99" in failure["error"] and "speaks API 1" in failure["error"]
    assert any(p["name"] == "overlap" for p in document["providers"])
