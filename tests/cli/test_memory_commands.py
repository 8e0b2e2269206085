"""``memoweave add / search / list / get / history / delete`` through click's CliRunner,
on the core's persistent ``memory`` store and the real ``onnx`` embedder."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from memoweave.plugins import load_registry


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _add(invoke: Any, text: str, *extra: str) -> list[dict[str, Any]]:
    return _json(invoke("add", text, "--user-id", "alice", "--json", *extra))["results"]


def test_add_json_shape_and_offline_extraction(cli_invoke: Any) -> None:
    results = _add(cli_invoke, "Hi there! I live in Lisbon. Where is the station?")
    assert [r["event"] for r in results] == ["ADD"]
    assert results[0]["memory"] == "I live in Lisbon."
    assert str(uuid.UUID(results[0]["id"])) == results[0]["id"]


def test_add_no_infer_metadata_and_get(cli_invoke: Any) -> None:
    (added,) = _add(
        cli_invoke,
        "Remember: the wifi password is on the fridge",
        "--no-infer",
        "--metadata",
        "topic=home",
        "--metadata",
        "priority=2",
        "--metadata-json",
        '{"source": "chat", "topic": "overridden"}',
    )
    item = _json(cli_invoke("get", added["id"], "--user-id", "alice", "--json"))
    assert item["memory"] == "Remember: the wifi password is on the fridge"
    assert item["metadata"] == {"topic": "home", "priority": 2, "source": "chat"}
    assert item["user_id"] == "alice"
    table = cli_invoke("get", added["id"])
    assert table.exit_code == 0
    assert added["id"] in table.output and "wifi password" in table.output


def test_add_reads_stdin(cli_invoke: Any) -> None:
    result = cli_invoke("add", "--user-id", "bob", "--json", input="I adopted a dog named Rex.\n")
    assert [r["memory"] for r in _json(result)["results"]] == ["I adopted a dog named Rex."]


def test_search_ranks_the_relevant_memory_first(cli_invoke: Any) -> None:
    _add(cli_invoke, "I work as a nurse at the city hospital.")
    _add(cli_invoke, "My favourite food is grilled sardines.")
    _add(cli_invoke, "I play the cello in an amateur orchestra.")
    body = _json(
        cli_invoke("search", "her profession", "--user-id", "alice", "--top-k", "2", "--json")
    )
    assert len(body["results"]) == 2
    assert body["results"][0]["memory"] == "I work as a nurse at the city hospital."
    assert body["results"][0]["score"] >= body["results"][1]["score"]
    explained = _json(
        cli_invoke("search", "cello orchestra", "--user-id", "alice", "--explain", "--json")
    )
    assert explained["results"][0]["memory"].startswith("I play the cello")
    signals = explained["results"][0]["explain"]
    assert {"dense", "keyword"} <= set(signals) <= {"dense", "keyword", "entity", "time", "recency"}
    table = cli_invoke("search", "cello", "--user-id", "alice", "--explain")
    assert table.exit_code == 0 and "cello" in table.output
    assert "dense" in table.output and "keyword" in table.output and "%)" in table.output


def test_search_rerank_uses_the_configured_reranker(cli_invoke: Any, cli_config: Path) -> None:
    _add(cli_invoke, "I work as a nurse at the city hospital.")
    _add(cli_invoke, "My favourite food is grilled sardines.")
    plain = _json(cli_invoke("search", "her job", "--user-id", "alice", "--explain", "--json"))
    assert not any("rerank" in r["explain"] for r in plain["results"])
    with cli_config.open("a", encoding="utf-8") as config:
        config.write("reranker: {provider: onnx-colbert}\n")
    body = _json(
        cli_invoke("search", "her job", "--user-id", "alice", "--rerank", "--explain", "--json")
    )
    assert body["results"][0]["memory"] == "I work as a nurse at the city hospital."
    assert all(0.0 <= r["explain"]["rerank"]["value"] <= 1.0 for r in body["results"])


def test_search_threshold_and_filter(cli_invoke: Any) -> None:
    _add(cli_invoke, "I live in Porto.", "--metadata", "topic=home")
    _add(cli_invoke, "I drive a red bicycle to work.", "--metadata", "topic=transport")
    found = _json(
        cli_invoke(
            "search", "where", "--user-id", "alice", "--filter", '{"topic": "transport"}', "--json"
        )
    )
    assert [r["memory"] for r in found["results"]] == ["I drive a red bicycle to work."]
    none = _json(cli_invoke("search", "Porto", "--user-id", "alice", "--threshold", "5", "--json"))
    assert none["results"] == []


def test_scopes_are_isolated(cli_invoke: Any) -> None:
    (mine,) = _add(cli_invoke, "I collect vintage stamps from Japan.")
    other = _json(cli_invoke("search", "stamps", "--user-id", "mallory", "--json"))
    assert other["results"] == []
    missing = cli_invoke("get", mine["id"], "--user-id", "mallory")
    assert missing.exit_code == 2
    assert "error[not_found]" in missing.stderr


def test_list_pages_with_cursor(cli_invoke: Any) -> None:
    texts = [f"I visited city number {n} last summer." for n in range(5)]
    for text in texts:
        _add(cli_invoke, text)
    first = _json(cli_invoke("list", "--user-id", "alice", "--top-k", "3", "--json"))
    assert len(first["results"]) == 3 and first["next_cursor"]
    second = _json(
        cli_invoke(
            "list", "--user-id", "alice", "--top-k", "3", "--cursor", first["next_cursor"], "--json"
        )
    )
    assert second["next_cursor"] is None
    listed = [r["memory"] for r in first["results"] + second["results"]]
    assert sorted(listed) == sorted(texts)
    table = cli_invoke("list", "--user-id", "alice", "--top-k", "3")
    assert table.exit_code == 0 and "--cursor" in table.output


def test_history_and_delete(cli_invoke: Any) -> None:
    (added,) = _add(cli_invoke, "I am learning to play chess.")
    events = _json(cli_invoke("history", added["id"], "--json"))
    assert [e["event"] for e in events] == ["ADD"]
    assert events[0]["new_memory"] == "I am learning to play chess."
    deleted = _json(cli_invoke("delete", added["id"], "--user-id", "alice", "--json"))
    assert deleted == {"message": "Memory deleted successfully!"}
    assert [e["event"] for e in _json(cli_invoke("history", added["id"], "--json"))] == [
        "ADD",
        "DELETE",
    ]
    gone = cli_invoke("get", added["id"], "--json")
    assert gone.exit_code == 2 and "error[not_found]" in gone.stderr
    table = cli_invoke("history", added["id"])
    assert table.exit_code == 0 and "DELETE" in table.output


def test_delete_all_of_a_scope(cli_invoke: Any) -> None:
    _add(cli_invoke, "I own a sailing boat.")
    _json(cli_invoke("add", "I dislike coriander.", "--user-id", "carol", "--json"))
    refused = cli_invoke("delete", "--all", "--user-id", "alice", input="y\n")  # not a TTY
    assert refused.exit_code == 2 and "error[confirmation_required]" in refused.stderr
    assert _json(cli_invoke("list", "--user-id", "alice", "--json"))["results"]
    done = cli_invoke("delete", "--all", "--user-id", "alice", "--yes")
    assert done.exit_code == 0, done.output
    assert _json(cli_invoke("list", "--user-id", "alice", "--json"))["results"] == []
    assert len(_json(cli_invoke("list", "--user-id", "carol", "--json"))["results"]) == 1


def test_bad_filter_json_is_a_typed_error(cli_invoke: Any) -> None:
    result = cli_invoke("search", "x", "--user-id", "alice", "--filter", "{topic: oops")
    assert result.exit_code == 2
    assert "error[invalid_filter]: --filter is not valid JSON" in result.stderr
    assert "hint:" in result.stderr
    not_object = cli_invoke("list", "--user-id", "alice", "--filter", "[1, 2]")
    assert not_object.exit_code == 2 and "error[invalid_filter]" in not_object.stderr
    bad_operator = cli_invoke("search", "x", "--user-id", "alice", "--filter", '{"a": {"$x": 1}}')
    assert bad_operator.exit_code == 2 and "error[invalid_filter]" in bad_operator.stderr


def test_bad_inputs_are_typed_errors(cli_invoke: Any) -> None:
    no_scope = cli_invoke("add", "I like tea.")
    assert no_scope.exit_code == 2 and "error[validation_error]" in no_scope.stderr
    bad_pair = cli_invoke("add", "I like tea.", "--user-id", "a", "--metadata", "novalue")
    assert bad_pair.exit_code == 2 and "KEY=VALUE" in bad_pair.stderr
    bad_json = cli_invoke("add", "I like tea.", "--user-id", "a", "--metadata-json", "{")
    assert bad_json.exit_code == 2 and "--metadata-json is not valid JSON" in bad_json.stderr
    bad_id = cli_invoke("get", "not-a-uuid")
    assert bad_id.exit_code == 2 and "is not a UUID" in bad_id.stderr
    both = cli_invoke("delete", "--user-id", "a")
    assert both.exit_code == 2 and "MEMORY_ID or --all" in both.stderr


def test_missing_config_file_is_a_config_error(tmp_path: Any, cli_onnx_available: None) -> None:
    from click.testing import CliRunner

    from memoweave.cli.main import main

    result = CliRunner().invoke(
        main, ["list", "--user-id", "a", "--config", str(tmp_path / "absent.yaml")]
    )
    assert result.exit_code == 2
    assert "error[config_error]" in result.stderr and "absent.yaml" in result.stderr


def test_invalid_utf8_and_control_characters_are_handled(cli_invoke: Any) -> None:
    """Issue 9, items 8 and 10: undecodable input is a typed error; stored control
    characters and bidi overrides are shown escaped, never sent to the terminal."""
    surrogate = cli_invoke("add", "caf\udce9 au lait", "--user-id", "alice")
    assert surrogate.exit_code == 2 and "error[validation_error]" in surrogate.stderr
    assert "lone surrogate" in surrogate.stderr
    latin1 = cli_invoke("add", "--user-id", "alice", input=b"caf\xe9 au lait")
    assert latin1.exit_code == 2 and "stdin is not valid utf-8" in latin1.stderr
    added = _add(
        cli_invoke, "I read \u202eevil\u202c books", "--no-infer", "--metadata", "note=\x1b[2J"
    )
    listed = cli_invoke("list", "--user-id", "alice")
    assert listed.exit_code == 0
    assert "\x1b" not in listed.output and "\u202e" not in listed.output
    assert "\\x1b[2J" in listed.output and "\\u202e" in listed.output
    assert added[0]["id"] in listed.output


def test_search_prints_the_relations_a_graph_store_reached(
    cli_config: Path, cli_invoke: Any, tmp_path: Path
) -> None:
    if "ladybug" not in load_registry().names("graph_store"):
        pytest.skip("the ladybug graph store plugin (memoweave-ladybug) is not installed")
    graph = {"provider": "ladybug", "config": {"path": str(tmp_path / "graph.lbug")}}
    cli_config.write_text(
        cli_config.read_text(encoding="utf-8") + f"graph_store: {json.dumps(graph)}\n",
        encoding="utf-8",
    )
    _add(cli_invoke, "Caroline went hiking with Melanie.", "--no-infer")
    body = _json(cli_invoke("search", "What does Caroline do?", "--user-id", "alice", "--json"))
    assert [(r["source"], r["destination"]) for r in body["relations"]] == [("caroline", "melanie")]
    table = cli_invoke("search", "What does Caroline do?", "--user-id", "alice")
    assert table.exit_code == 0
    assert "Relations" in table.output and "co_mentioned" in table.output
    plain = cli_invoke("search", "What does Caroline do?", "--user-id", "bob")
    assert plain.exit_code == 0 and "Relations" not in plain.output


def test_search_prints_its_results_before_the_stores_close(
    cli_invoke: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closing an embedded store flushes its files; the reader need not wait for it."""
    from memoweave.cli import read_cmds
    from memoweave.memory.api import Memory

    _add(cli_invoke, "I play the cello in an amateur orchestra.")
    events: list[str] = []
    close, echo = Memory.close, read_cmds.echo_json

    def closing(self: Memory) -> None:
        events.append("close")
        close(self)

    def printing(value: Any) -> None:
        events.append("print")
        echo(value)

    monkeypatch.setattr(Memory, "close", closing)
    monkeypatch.setattr(read_cmds, "echo_json", printing)
    body = _json(cli_invoke("search", "cello", "--user-id", "alice", "--json"))
    assert body["results"][0]["memory"].startswith("I play the cello")
    assert events[:2] == ["print", "close"]
