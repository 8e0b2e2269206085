"""LLM answers are validated against the strategy's schema (issue 9 item 7, issue 17):
wrong-schema answers are repaired once, then an ``LLMError`` that writes nothing; one answer
may write at most ``extraction.max_memories_per_add`` memories; memory numbers are
integers (``true`` is not memory 1)."""

from __future__ import annotations

from typing import Any

import pytest

from memoweave import LLMError
from memoweave.memory import Memory
from memoweave.providers.llm import LLMCapabilities, ResponseSchema
from memoweave.testing.doubles import ScriptedLLM

from .conftest import MakeMemory

GOOD = {"memories": [{"text": "Alice lives in Berlin", "replaces": [], "sources": [1]}]}


def _nothing_written(mem: Memory) -> None:
    assert mem.get_all(user_id="alice")["results"] == []


@pytest.mark.parametrize(
    "wrong",
    [
        {"facts": ["Alice lives in Berlin"]},
        [{"text": "Alice lives in Berlin"}],
        {"memories": {"text": "Alice lives in Berlin"}},
        {"memories": [{"fact": "Alice lives in Berlin"}]},
        {"memories": [{"text": "Alice lives in Berlin", "replaces": [True]}]},
        {"memories": [{"text": "Alice lives in Berlin", "sources": [1.5]}]},
        {"memories": [{"text": "Alice lives in Berlin", "replaces": ["one"]}]},
        {"memories": [{"text": "x" * 2001}]},
        "I am sorry, I cannot answer in JSON.",
    ],
    ids=[
        "facts-key",
        "bare-list",
        "object-not-list",
        "no-text",
        "boolean-id",
        "float-id",
        "word-id",
        "too-long",
        "prose",
    ],
)
def test_wrong_schema_is_repaired_once_then_an_error_that_writes_nothing(
    llm_memory: Memory, llm: ScriptedLLM, wrong: Any
) -> None:
    llm.push(wrong, wrong)
    with pytest.raises(LLMError, match="did not match the expected format after 2") as info:
        llm_memory.add("I live in Berlin.", user_id="alice")
    assert len(llm.calls) == 2
    assert "invalid" in llm.calls[1].messages[-1]["content"]  # the repair names the problem
    assert info.value.details["format"] == "AdditiveAnswer"
    _nothing_written(llm_memory)
    llm.push(wrong, GOOD)
    out = llm_memory.add("I live in Berlin.", user_id="alice")
    assert [r["memory"] for r in out["results"]] == ["Alice lives in Berlin"]


def test_digit_strings_are_memory_numbers(llm_memory: Memory, llm: ScriptedLLM) -> None:
    llm.push(GOOD)
    old = llm_memory.add("I live in Berlin.", user_id="alice")["results"][0]["id"]
    llm.push({"memories": [{"text": "Alice lives in Paris", "replaces": ["1"], "sources": []}]})
    out = llm_memory.add("I moved to Paris.", user_id="alice")
    assert {(r["event"], r["id"]) for r in out["results"] if r["event"] == "SUPERSEDE"} == {
        ("SUPERSEDE", old)
    }


@pytest.mark.parametrize("answer", [{"memory": [{"id": True, "event": "DELETE"}]},
                                    {"memory": [{"id": 1, "event": "FORGET"}]}],
                         ids=["boolean-id", "unknown-event"])  # fmt: skip
def test_decide_events_are_validated(make_memory: MakeMemory, answer: dict[str, Any]) -> None:
    llm = ScriptedLLM()
    mem = make_memory({"extraction": {"strategy": "decide"}}, llm=llm)
    llm.push({"facts": ["Alice has a dog"]})
    mem.add("I have a dog.", user_id="alice")
    llm.push({"facts": ["Alice has no dog"]}, answer, answer)
    with pytest.raises(LLMError) as info:
        mem.add("I gave my dog away.", user_id="alice")
    assert info.value.details["format"] == "MemoryDecisions"
    assert [i["memory"] for i in mem.get_all(user_id="alice")["results"]] == ["Alice has a dog"]


def test_decide_event_names_are_case_insensitive(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM()
    mem = make_memory({"extraction": {"strategy": "decide"}}, llm=llm)
    llm.push({"facts": ["Alice has a dog"]})
    mem.add("I have a dog.", user_id="alice")
    llm.push({"facts": ["Alice has no dog"]}, {"memory": [{"id": "1", "event": "delete"}]})
    assert [r["event"] for r in mem.add("No dog now.", user_id="alice")["results"]] == ["DELETE"]


def test_one_answer_may_write_at_most_the_configured_number(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM()
    mem = make_memory({"extraction": {"max_memories_per_add": 3}}, llm=llm)
    many = {"memories": [{"text": f"Alice fact {n}", "replaces": [], "sources": []}
                         for n in range(4)]}  # fmt: skip
    llm.push(many, many)
    with pytest.raises(LLMError, match="4 memories in one answer; the limit is 3"):
        mem.add("Lots of facts.", user_id="alice")
    _nothing_written(mem)
    llm.push({"memories": many["memories"][:3]})
    assert len(mem.add("Lots of facts.", user_id="alice")["results"]) == 3


def test_default_cap_is_fifty(llm_memory: Memory, llm: ScriptedLLM) -> None:
    flood = {"memories": [{"text": f"Alice fact {n}"} for n in range(51)]}
    llm.push(flood, flood)
    with pytest.raises(LLMError, match="the limit is 50"):
        llm_memory.add("Lots of facts.", user_id="alice")
    _nothing_written(llm_memory)


def test_an_answer_the_provider_could_not_read_is_repaired(
    llm_memory: Memory, llm: ScriptedLLM
) -> None:
    unreadable = LLMError("the model did not return a JSON object", details={"text": "Sure!"})
    llm.push(unreadable, GOOD)
    out = llm_memory.add("I live in Berlin.", user_id="alice")
    assert [r["memory"] for r in out["results"]] == ["Alice lives in Berlin"]
    assert llm.calls[1].messages[-2] == {"role": "assistant", "content": "Sure!"}
    llm.push(LLMError("server down"))
    with pytest.raises(LLMError, match="server down"):  # a real failure is not "repaired"
        llm_memory.add("I live in Berlin.", user_id="alice")


def test_schema_is_sent_when_the_provider_enforces_it(make_memory: MakeMemory) -> None:
    native = ScriptedLLM([GOOD])
    make_memory(llm=native).add("I live in Berlin.", user_id="alice")
    sent = native.calls[0].kwargs["response_format"]
    assert isinstance(sent, ResponseSchema) and sent.name == "AdditiveAnswer" and sent.strict
    json_only = ScriptedLLM([GOOD], capabilities=LLMCapabilities(json_schema=False))
    make_memory(llm=json_only).add("I live in Berlin.", user_id="alice")
    assert json_only.calls[0].kwargs["response_format"] == "json_object"


def test_blank_facts_are_skipped_not_errors(llm_memory: Memory, llm: ScriptedLLM) -> None:
    llm.push({"memories": [{"text": "  "}, {"text": "Alice lives in  Berlin"}]})
    out = llm_memory.add("I live in Berlin.", user_id="alice")
    assert [r["memory"] for r in out["results"]] == ["Alice lives in Berlin"]
