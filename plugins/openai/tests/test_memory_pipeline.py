"""``Memory.add(infer=True)`` end to end through the real llama.cpp server (issue 17).

Every strategy runs on SmolLM2-135M-Instruct with grammar-constrained output: the answers
must parse and be written (their quality is not judged). A recording proxy between the
provider and the server shows the exact request bodies: OpenAI Structured Outputs
(``json_schema`` with name, schema and ``strict``) as OpenAI documents it, then
llama-cpp-python's ``json_object`` + ``schema`` after the ``auto`` step-down, each with the
core's schema unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memoweave.errors import LLMError
from memoweave.memory import Memory
from memoweave.memory.prompts import load_prompt
from memoweave.memory.schemas import core_response_schemas
from memoweave.testing.llm import AGENT_RUN, assert_adds_stored

CHAT_ALIAS = "smollm2-135m"
EMBED_ALIAS = "all-minilm-l6-v2"
OBSERVED = "2024-05-08T10:00:00Z"  # a fixed date keeps the prompts (and answers) stable
SCHEMAS = core_response_schemas()

MakeMemory = Callable[..., tuple[Memory, Any]]


@pytest.fixture
def make_memory(
    openai_chat_server: Any,
    openai_embed_server: Any,
    openai_proxy: Callable[..., Any],
    tmp_path: Path,
) -> Iterator[MakeMemory]:
    """``make_memory(extraction={...}, **llm_config)`` -> (Memory, its recording proxy)."""
    built: list[Memory] = []

    def make(extraction: dict[str, Any] | None = None, **llm: Any) -> tuple[Memory, Any]:
        proxy = openai_proxy(openai_chat_server.url)
        llm_config = {"base_url": proxy.url + "/v1", "model": CHAT_ALIAS, "max_retries": 0,
                      "timeout": 300.0, **llm}  # fmt: skip
        embed_url = openai_embed_server.url + "/v1"
        config = {
            "llm": {"provider": "openai", "config": llm_config},
            "embedder": {"provider": "openai", "config": {"base_url": embed_url,
                                                          "model": EMBED_ALIAS}},
            "vector_store": {"provider": "memory"},
            "extraction": extraction or {},
            "history_db_path": str(tmp_path / f"history{len(built)}.db"),
        }  # fmt: skip
        memory = Memory(config)
        built.append(memory)
        return memory, proxy

    yield make
    for memory in built:
        memory.close()


def _chats(proxy: Any) -> list[dict[str, Any]]:
    return [r.body for r in proxy.requests if r.path.endswith("/chat/completions")]


def test_additive_add_steps_down_and_writes(make_memory: MakeMemory) -> None:
    memory, proxy = make_memory()  # structured_output: auto
    out = memory.add(
        [{"role": "user", "content": "I am a vegetarian and I live in Lisbon.", "name": "Alice"}],
        user_id="alice",
        observed_at=OBSERVED,
    )
    assert_adds_stored(memory, out["results"], user_id="alice")
    first, second = _chats(proxy)
    sent = SCHEMAS["additive"]
    assert first["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "AdditiveAnswer", "schema": sent.schema, "strict": True},
    }  # OpenAI Structured Outputs; llama-cpp-python rejects it, so auto steps down
    assert second["response_format"] == {"type": "json_object", "schema": sent.schema}
    assert second["messages"][0]["content"] == load_prompt("additive_v2")
    assert (second["temperature"], second["max_tokens"]) == (0.0, 2048)


def test_decide_add_runs_both_steps(make_memory: MakeMemory) -> None:
    memory, proxy = make_memory({"strategy": "decide"}, structured_output="json_object_schema")
    memory.add("Alice lives in Lisbon.", user_id="alice", infer=False)
    out = memory.add(
        [{"role": "user", "content": "I moved to Berlin last month.", "name": "Alice"}],
        user_id="alice",
        observed_at=OBSERVED,
    )
    formats = [body["response_format"] for body in _chats(proxy)]
    assert formats == [
        {"type": "json_object", "schema": SCHEMAS["decide_facts"].schema},
        {"type": "json_object", "schema": SCHEMAS["decide_events"].schema},
    ]
    assert_adds_stored(memory, out["results"], user_id="alice")


def test_procedural_add_stores_the_summary(make_memory: MakeMemory) -> None:
    memory, proxy = make_memory(structured_output="json_object_schema")
    out = memory.add(
        AGENT_RUN,
        agent_id="counter",
        memory_type="procedural_memory",
    )
    [result] = out["results"]
    assert result["event"] == "ADD" and result["memory"].strip()
    assert_adds_stored(memory, out["results"], agent_id="counter")
    [body] = _chats(proxy)
    assert body["response_format"] == {
        "type": "json_object",
        "schema": SCHEMAS["procedural"].schema,
    }


def test_failed_extraction_raises_and_writes_nothing(make_memory: MakeMemory) -> None:
    """An answer cut off by the completion budget cannot parse: one repair, then LLMError."""
    memory, proxy = make_memory({"max_answer_tokens": 16}, structured_output="json_object_schema")
    with pytest.raises(LLMError) as info:
        memory.add("I am a vegetarian and I live in Lisbon.", user_id="alice")
    assert "nothing was written" in info.value.hint
    assert len(_chats(proxy)) == 2  # the answer and one repair
    assert memory.get_all(user_id="alice")["results"] == []
