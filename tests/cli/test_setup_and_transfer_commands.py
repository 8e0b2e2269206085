"""``memoweave init / update / reset / export / import`` and the confirmation rules, through
click's CliRunner on the core's persistent ``memory`` store and the real ``onnx`` embedder."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memoweave.cli import errors as cli_errors
from memoweave.cli.main import main
from memoweave.config import MemoryConfig

from ..transfer.conftest import sample_lines, write_export


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _add(invoke: Any, text: str, user: str = "alice") -> str:
    added = _json(invoke("add", text, "--user-id", user, "--no-infer", "--json"))
    return added["results"][0]["id"]


def test_delete_all_without_a_terminal_needs_yes(cli_invoke: Any) -> None:
    memory_id = _add(cli_invoke, "I live in Lisbon")
    result = cli_invoke("delete", "--all", "--user-id", "alice")
    assert result.exit_code == 2
    assert "error[confirmation_required]" in result.stderr and "--yes" in result.stderr
    assert "Aborted" not in result.output
    assert _json(cli_invoke("get", memory_id, "--json"))["id"] == memory_id


def test_delete_all_asks_on_a_terminal(cli_invoke: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    memory_id = _add(cli_invoke, "I live in Lisbon")
    monkeypatch.setattr(cli_errors, "stdin_is_terminal", lambda: True)
    declined = cli_invoke("delete", "--all", "--user-id", "alice", input="n\n")
    assert declined.exit_code == 1 and "Nothing changed" in declined.stderr
    assert cli_invoke("get", memory_id).exit_code == 0
    accepted = cli_invoke("delete", "--all", "--user-id", "alice", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert cli_invoke("get", memory_id).exit_code == 2


def test_not_found_hint_names_the_list_command(cli_invoke: Any) -> None:
    result = cli_invoke("get", "00000000-0000-0000-0000-000000000001")
    assert result.exit_code == 2 and "error[not_found]" in result.stderr
    assert "memoweave list" in result.stderr and "get_all()" not in result.stderr


def test_update_rewrites_text_and_metadata(cli_invoke: Any) -> None:
    memory_id = _add(cli_invoke, "I live in Lisbon")
    body = _json(cli_invoke("update", memory_id, "I live in Berlin", "--metadata", "k=1", "--json"))
    assert body["memory"] == "I live in Berlin" and body["metadata"] == {"k": 1}
    events = _json(cli_invoke("history", memory_id, "--json"))
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]
    other = cli_invoke("update", memory_id, "x", "--user-id", "bob")
    assert other.exit_code == 2 and "error[not_found]" in other.stderr
    nothing = cli_invoke("update", memory_id)
    assert nothing.exit_code == 2 and "nothing to update" in nothing.stderr


def test_reset_needs_confirmation_then_deletes_everything(cli_invoke: Any) -> None:
    memory_id = _add(cli_invoke, "I live in Lisbon")
    refused = cli_invoke("reset")
    assert refused.exit_code == 2 and "error[confirmation_required]" in refused.stderr
    assert cli_invoke("get", memory_id).exit_code == 0
    done = cli_invoke("reset", "--yes")
    assert done.exit_code == 0, done.output
    assert cli_invoke("get", memory_id).exit_code == 2


def test_export_then_import_into_another_store(
    cli_invoke: Any, tmp_path: Path, cli_onnx_available: None
) -> None:
    _add(cli_invoke, "I live in Lisbon")
    _add(cli_invoke, "I play the cello", user="bob")
    exported = cli_invoke("export", "--with-vectors")
    assert exported.exit_code == 0, exported.output
    dump = tmp_path / "dump.jsonl"
    dump.write_text(exported.stdout)
    assert len(exported.stdout.splitlines()) == 3
    other = tmp_path / "other.yaml"
    store = json.dumps(str(tmp_path / "other-store"))
    other.write_text(
        f"vector_store: {{provider: memory, config: {{path: {store}}}}}\n"
        "embedder: {provider: onnx}\n"
        f"history_db_path: {json.dumps(str(tmp_path / 'other.db'))}\n"
    )
    runner = CliRunner()
    summary = _json(runner.invoke(main, ["import", str(dump), "--config", str(other), "--json"]))
    assert (summary["written"], summary["vectors_reused"], summary["embedded"]) == (2, 2, 0)
    plain = runner.invoke(main, ["import", "-", "--config", str(other)], input=dump.read_text())
    assert plain.exit_code == 0, plain.output
    assert "2 unchanged" in plain.stdout and "records/s" in plain.stderr


def test_import_reports_bad_lines_by_number(cli_invoke: Any, tmp_path: Path) -> None:
    lines = sample_lines(4)
    source = write_export(tmp_path / "in.jsonl", [*lines, {**lines[0], "id": "nope"}])
    refused = cli_invoke("import", str(source))
    assert refused.exit_code == 2
    assert "error[validation_error]" in refused.stderr and "line 6" in refused.stderr
    assert "--skip-invalid" in refused.stderr
    summary = _json(cli_invoke("import", str(source), "--skip-invalid", "--json"))
    assert summary["written"] == 4 and summary["errors"][0]["line"] == 6
    assert cli_invoke("import").exit_code == 2


@pytest.mark.parametrize(
    ("store", "embedder", "llm"),
    [
        *itertools.product(
            ["qdrant", "qdrant-server", "milvus", "upstash", "memory"], ["onnx"], ["none"]
        ),
        *(("memory", e, "openai") for e in ["sentence-transformers", "openai", "ollama"]),
        ("memory", "onnx", "ollama"),
    ],
)
def test_init_writes_a_valid_commented_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str, embedder: str, llm: str
) -> None:
    for name in ("OPENAI_API_KEY", "UPSTASH_VECTOR_REST_URL", "UPSTASH_VECTOR_REST_TOKEN"):
        monkeypatch.setenv(name, "https://example.invalid" if "URL" in name else "secret")
    target = tmp_path / "memoweave.yaml"
    args = ["init", "-o", str(target), "--store", store, "--embedder", embedder, "--llm", llm]
    result = CliRunner().invoke(main, [*args, "--home", str(tmp_path / "home")])
    assert result.exit_code == 0, result.output
    assert "#" in target.read_text()
    config = MemoryConfig.from_yaml(target)
    assert config.embedder is not None and config.vector_store is not None
    assert (config.llm is None) == (llm == "none")
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 2 and "--force" in again.stderr
