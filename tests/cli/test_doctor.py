"""``memoweave doctor [--repair]``: one line per check with its fix, exit 2 on a problem."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any


def test_doctor_reports_repairs_and_then_passes(cli_invoke: Any, tmp_path: Path) -> None:
    added = cli_invoke("add", "I keep bees", "--user-id", "alice", "--no-infer", "--json")
    assert added.exit_code == 0, added.output
    healthy = cli_invoke("doctor")
    assert healthy.exit_code == 0, healthy.output
    assert "store and history: 1 memories on both sides" in healthy.output
    shutil.rmtree(tmp_path / "store")
    refused = cli_invoke("list", "--user-id", "alice")
    assert refused.exit_code == 2 and "error[store_history_mismatch]" in refused.stderr
    broken = cli_invoke("doctor")
    assert broken.exit_code == 2
    lines = broken.output.splitlines()
    fail = next(i for i, line in enumerate(lines) if line.startswith(" FAIL  store and history"))
    assert lines[fail + 1].strip().startswith("fix: run `memoweave doctor --repair`")
    repaired = cli_invoke("doctor", "--repair", "--json")
    assert repaired.exit_code == 0, repaired.output
    report = {f["check"]: f["status"] for f in json.loads(repaired.stdout)}
    assert report["store and history"] == "fixed"
    listed = cli_invoke("list", "--user-id", "alice", "--json")
    assert [r["memory"] for r in json.loads(listed.stdout)["results"]] == ["I keep bees"]


def test_doctor_repairs_a_lost_edge_metadata_file_on_the_default_stack(
    tmp_path: Path, monkeypatch: Any, cli_onnx_available: None
) -> None:
    from click.testing import CliRunner

    from memoweave.cli.main import main

    monkeypatch.setenv("MEMOWEAVE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MEMOWEAVE_CONFIG", raising=False)
    runner = CliRunner()
    added = runner.invoke(main, ["add", "I keep bees", "--user-id", "a", "--no-infer"])
    assert added.exit_code == 0, added.output
    (tmp_path / "home" / "qdrant-edge" / "memoweave" / "memoweave.json").unlink()
    refused = runner.invoke(main, ["list", "--user-id", "a"])
    assert refused.exit_code == 2 and "nothing was deleted" in refused.stderr
    assert runner.invoke(main, ["doctor"]).exit_code == 2
    fixed = runner.invoke(main, ["doctor", "--repair"])
    assert fixed.exit_code == 0, fixed.output
    assert "FIXED  collection: rebuilt" in fixed.output
    listed = runner.invoke(main, ["list", "--user-id", "a", "--json"])
    assert [r["memory"] for r in json.loads(listed.stdout)["results"]] == ["I keep bees"]
