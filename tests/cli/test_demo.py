"""``memoweave demo`` end to end (embedded stack and a YAML config), and the demo's LLM
path, where the model decides the supersession (a scripted LLM, core-test double)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from memoweave.cli.demo_run import run_demo
from memoweave.cli.main import main
from memoweave.demo import load_sample
from memoweave.memory.api import Memory
from memoweave.plugins import load_registry
from memoweave.testing.doubles import HashingEmbedder, ScriptedLLM


def test_demo_on_the_embedded_stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = {(i.kind, i.name) for i in load_registry().list()}
    if not {("vector_store", "qdrant"), ("embedder", "onnx")} <= names:
        pytest.skip("the embedded stack needs memoweave-qdrant and memoweave-onnx")
    home = tmp_path / "user-home"
    monkeypatch.setenv("MEMOWEAVE_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("MEMOWEAVE_CONFIG", raising=False)
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Mode: offline extractor" in out
    assert "16 add() calls over 32 turns" in out
    history = out[out.index("History of") :]
    assert re.search(r"\bADD\b", history) and re.search(r"\bUPDATE\b", history)
    assert "I live in Lisbon." in history and "I moved to Berlin (Kreuzberg)" in history
    assert "Search: Where do I live now?" in out
    assert not home.exists()  # a temporary home was used, the user's one is untouched


DEMO_ANSWERS = {
    "Where do I live now?": "Berlin",
    "What do I do for work?": "data analyst",
    "Do I have pets?": "Pixel",
    "How did the half marathon go?": "finished the Lisbon half marathon",
    "my sister": "Ines",
    "日本語": "日本語",
}
"""What the first result of each demo search must contain (the memory it is about)."""


def test_every_demo_search_puts_the_memory_it_is_about_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = {(i.kind, i.name) for i in load_registry().list()}
    if not {("vector_store", "qdrant"), ("embedder", "onnx")} <= names:
        pytest.skip("the embedded stack needs memoweave-qdrant and memoweave-onnx")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("MEMOWEAVE_CONFIG", raising=False)
    result = CliRunner().invoke(main, ["demo", "--home", str(tmp_path / "home"), "--json"])
    assert result.exit_code == 0, result.output
    searches = {s["query"]: s["results"] for s in json.loads(result.stdout)["searches"]}
    assert set(searches) == set(DEMO_ANSWERS) == set(load_sample().queries)
    for query, needle in DEMO_ANSWERS.items():
        first = searches[query][0]["memory"]
        assert needle in first, (query, [h["memory"] for h in searches[query]])


def test_demo_json_with_config_and_home(cli_config: Path, tmp_path: Path) -> None:
    home = tmp_path / "demo-home"
    args = ["demo", "--config", str(cli_config), "--home", str(home), "--json"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert report["mode"] == "offline" and report["adds"] == 16 and report["turns"] == 32
    assert report["home"] == str(home)
    (changed,) = report["changed"]
    assert [e["event"] for e in changed["history"]] == ["ADD", "UPDATE"]
    assert changed["history"][0]["new_memory"] == "I live in Lisbon."
    searches = {s["query"]: s["results"] for s in report["searches"]}
    assert len(searches) == 6
    assert any("Berlin" in r["memory"] for r in searches["Where do I live now?"])
    assert any("Pixel" in r["memory"] for r in searches["Do I have pets?"])
    # a second run in the same home replaces the demo user's memories, never duplicates them
    second = json.loads(CliRunner().invoke(main, args).stdout)
    assert len(second["memories"]) == len(report["memories"])


def _extract(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A model's answer to the additive prompt: the user's first sentence, attributed;
    the Lisbon memory replaced when the user says they live in Berlin."""
    prompt = str(messages[-1]["content"])
    existing = prompt.split("EXISTING MEMORIES:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    new = prompt.split("NEW MESSAGES:\n", 1)[1].splitlines()
    line = next(x for x in new if x.startswith("[1] Maya: "))[len("[1] Maya: ") :]
    text = "Maya said: " + re.split(r"(?<=[.!?])\s+", line)[0]
    if "I live in Lisbon" in line:
        text = "Maya lives in Lisbon."
    if "I live in Berlin now" in line:
        text = "Maya lives in Berlin now."
    replaces = [
        int(x.split(".", 1)[0]) for x in existing if "lives in Lisbon" in x and "Berlin" in text
    ]
    return {"memories": [{"text": text, "replaces": replaces, "sources": [1]}]}


def test_demo_llm_mode_shows_the_supersession(tmp_path: Path) -> None:
    llm = ScriptedLLM(default=_extract)
    memory = Memory(
        {"vector_store": {"provider": "memory"}, "history_db_path": str(tmp_path / "h.db")},
        llm=llm,
        embedder=HashingEmbedder(),
    )
    console = Console(record=True, width=100)
    with memory:
        report = run_demo(memory, load_sample(), console, with_llm=True)
    assert len(llm.calls) == report.adds == 16  # one LLM call per add
    assert report.events.get("SUPERSEDE") == 1
    (changed,) = report.changed
    assert [e["event"] for e in changed["history"]] == ["ADD", "SUPERSEDE"]
    assert changed["history"][1]["new_memory"] == "Maya lives in Berlin now."
    text = console.export_text()
    assert "'Maya lives in Lisbon.' was superseded by 'Maya lives in Berlin now.'" in text
    assert all("Lisbon." not in m["memory"] for m in report.memories)


def test_demo_reports_a_failed_add_and_goes_on(tmp_path: Path) -> None:
    """A weak model's answer that stays unusable after the repair: that add fails with
    LLMError and writes nothing; the demo says so and ingests the rest."""
    calls = {"n": 0}

    def flaky(messages: list[dict[str, Any]]) -> Any:
        calls["n"] += 1
        return {"facts": ["wrong schema"]} if calls["n"] in (3, 4) else _extract(messages)

    llm = ScriptedLLM(default=flaky)
    memory = Memory(
        {"vector_store": {"provider": "memory"}, "history_db_path": str(tmp_path / "h.db")},
        llm=llm,
        embedder=HashingEmbedder(),
    )
    console = Console(record=True, width=120)
    with memory:
        report = run_demo(memory, load_sample(), console, with_llm=True)
    assert report.adds == 16 and len(llm.calls) == 17  # the failed add: answer + one repair
    (failed,) = report.failed_adds
    assert (failed["session"], failed["add"]) == (1, 3)
    assert failed["error"]["code"] == "llm_error"
    assert report.events["FAILED"] == 1 and len(report.add_seconds) == 16
    text = console.export_text()
    assert "add 3 of session 1 failed, nothing was written" in text
    assert "Wall time per add(): mean" in text and "1 add(s) failed" in text
    assert report.changed  # the demo went on to the end


def test_local_llm_without_llama_cpp_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memoweave.local_llm.server as server

    monkeypatch.setattr(server, "llama_server_available", lambda: False)
    result = CliRunner().invoke(main, ["demo", "--local-llm", "--home", str(tmp_path / "h")])
    assert result.exit_code == 2
    assert "error[config_error]" in result.stderr and "llama-cpp-python" in result.stderr
