"""``Memory.add(infer=True)`` end to end through the Ollama-protocol server (issue 17).

SmolLM2-135M-Instruct behind the test server, whose ``format`` schemas become llama.cpp
grammars as in Ollama: every strategy's answers must parse and be written (quality is not
judged). The recorded ``/api/chat`` bodies show ``format`` carrying the core's schema
unchanged, as Ollama documents structured outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memoweave.memory import Memory
from memoweave.memory.schemas import core_response_schemas
from memoweave.testing.llm import AGENT_RUN, assert_adds_stored

CHAT_MODEL = "smollm2:135m"
EMBED_MODEL = "all-minilm"
OBSERVED = "2024-05-08T10:00:00Z"  # a fixed date keeps the prompts (and answers) stable
SCHEMAS = core_response_schemas()

MakeMemory = Callable[..., tuple[Memory, Any]]


@pytest.fixture
def make_memory(ollama_serve: Callable[..., Any], tmp_path: Path) -> Iterator[MakeMemory]:
    """``make_memory(extraction={...})`` -> (Memory, its Ollama test server)."""
    built: list[Memory] = []

    def make(extraction: dict[str, Any] | None = None) -> tuple[Memory, Any]:
        server = ollama_serve(chat=True, embed=True)
        connection = {"host": server.url, "max_retries": 0, "timeout": 300.0}
        config = {
            "llm": {"provider": "ollama", "config": {**connection, "model": CHAT_MODEL}},
            "embedder": {"provider": "ollama", "config": {**connection, "model": EMBED_MODEL}},
            "vector_store": {"provider": "memory"},
            "extraction": extraction or {},
            "history_db_path": str(tmp_path / f"history{len(built)}.db"),
        }
        memory = Memory(config)
        built.append(memory)
        return memory, server

    yield make
    for memory in built:
        memory.close()


def test_additive_add_writes_through_format(make_memory: MakeMemory) -> None:
    memory, server = make_memory()
    out = memory.add(
        [{"role": "user", "content": "I am a vegetarian and I live in Lisbon.", "name": "Alice"}],
        user_id="alice",
        observed_at=OBSERVED,
    )
    assert_adds_stored(memory, out["results"], user_id="alice")
    [body] = server.calls("/api/chat")
    assert body["format"] == SCHEMAS["additive"].schema
    assert body["options"] == {"temperature": 0.0, "num_predict": 2048}
    assert body["stream"] is False


def test_decide_add_runs_both_steps(make_memory: MakeMemory) -> None:
    memory, server = make_memory({"strategy": "decide"})
    memory.add("Alice lives in Lisbon.", user_id="alice", infer=False)
    out = memory.add(
        [{"role": "user", "content": "I moved to Berlin last month.", "name": "Alice"}],
        user_id="alice",
        observed_at=OBSERVED,
    )
    formats = [body["format"] for body in server.calls("/api/chat")]
    assert formats == [SCHEMAS["decide_facts"].schema, SCHEMAS["decide_events"].schema]
    assert_adds_stored(memory, out["results"], user_id="alice")


def test_procedural_add_stores_the_summary(make_memory: MakeMemory) -> None:
    memory, server = make_memory()
    out = memory.add(
        AGENT_RUN,
        agent_id="counter",
        memory_type="procedural_memory",
    )
    [result] = out["results"]
    assert result["event"] == "ADD" and result["memory"].strip()
    assert_adds_stored(memory, out["results"], agent_id="counter")
    [body] = server.calls("/api/chat")
    assert body["format"] == SCHEMAS["procedural"].schema
