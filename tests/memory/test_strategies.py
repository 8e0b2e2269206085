"""Write strategies driven by the scripted LLM: additive, decide, procedural, offline."""

from __future__ import annotations

import pytest

from memoweave import ConfigError, LLMError, ValidationError
from memoweave.memory import Memory
from memoweave.testing.doubles import ScriptedLLM

from .conftest import MakeMemory

EXCHANGE = [
    {"role": "user", "content": "I moved to Berlin last month.", "name": "alice", "id": "u1"},
    {"role": "assistant", "content": "How exciting! How do you like it?", "id": "a1"},
]


def test_additive_makes_one_call_and_stores_facts(llm_memory: Memory, llm: ScriptedLLM) -> None:
    llm.push({"memories": [{"text": "Alice moved to Berlin in April 2023", "sources": [1]}]})
    out = llm_memory.add(EXCHANGE, user_id="alice", observed_at="2023-05-08T10:00:00")
    assert len(llm.calls) == 1
    assert [(r["event"], r["memory"]) for r in out["results"]] == [
        ("ADD", "Alice moved to Berlin in April 2023")
    ]
    item = llm_memory.get(out["results"][0]["id"])
    assert item["source_message_ids"] == ["u1"] and item["actor_id"] == "alice"
    prompt = llm.calls[0].messages[1]["content"]
    assert "2023-05-08" in prompt and "[1] alice: I moved to Berlin last month." in prompt


def test_additive_prompt_shows_related_memories_as_small_numbers(
    llm_memory: Memory, llm: ScriptedLLM
) -> None:
    llm.push({"memories": [{"text": "Alice lives in Berlin"}]})
    first = llm_memory.add("I live in Berlin.", user_id="alice")["results"][0]["id"]
    llm.push({"memories": []})
    llm_memory.add("Berlin is rainy today.", user_id="alice")
    prompt = llm.calls[1].messages[1]["content"]
    assert "1. Alice lives in Berlin" in prompt
    assert first not in prompt  # never UUIDs in prompts


def test_supersession_keeps_the_old_memory(llm_memory: Memory, llm: ScriptedLLM) -> None:
    llm.push({"memories": [{"text": "Alice lives in Berlin"}]})
    old = llm_memory.add("I live in Berlin.", user_id="alice")["results"][0]["id"]
    llm.push({"memories": [{"text": "Alice lives in Paris", "replaces": [1]}]})
    out = llm_memory.add("I just moved from Berlin to Paris.", user_id="alice")
    assert len(llm.calls) == 2  # supersession decided in the same single call
    events = {r["event"]: r for r in out["results"]}
    new = events["ADD"]["id"]
    assert events["SUPERSEDE"]["id"] == old and events["SUPERSEDE"]["superseded_by"] == new
    visible = [r["memory"] for r in llm_memory.get_all(user_id="alice")["results"]]
    assert visible == ["Alice lives in Paris"]
    everything = llm_memory.get_all(user_id="alice", include_superseded=True)["results"]
    old_item = next(i for i in everything if i["id"] == old)
    assert old_item["superseded_by"] == new and old_item["valid_until"]
    assert [e["event"] for e in llm_memory.history(old)] == ["ADD", "SUPERSEDE"]
    assert llm_memory.get(new)["supersedes"] == [old]
    hits = llm_memory.search("where does Alice live", user_id="alice")["results"]
    assert [h["id"] for h in hits] == [new]
    hits = llm_memory.search("Berlin", user_id="alice", include_superseded=True)["results"]
    assert old in [h["id"] for h in hits]


def test_supersession_chain(llm_memory: Memory, llm: ScriptedLLM) -> None:
    llm.push({"memories": [{"text": "Alice works at Acme"}]})
    a = llm_memory.add("I work at Acme.", user_id="alice")["results"][0]["id"]
    llm.push({"memories": [{"text": "Alice works at Globex", "replaces": [1]}]})
    b = next(
        r["id"]
        for r in llm_memory.add("I now work at Globex, not Acme.", user_id="alice")["results"]
        if r["event"] == "ADD"
    )
    llm.push({"memories": [{"text": "Alice works at Initech", "replaces": [1]}]})
    c = next(
        r["id"]
        for r in llm_memory.add("Left Globex, joined Initech.", user_id="alice")["results"]
        if r["event"] == "ADD"
    )
    assert llm_memory.get(a)["superseded_by"] == b
    assert llm_memory.get(b)["superseded_by"] == c
    assert [i["id"] for i in llm_memory.get_all(user_id="alice")["results"]] == [c]


def test_invented_ids_never_touch_other_scopes(llm_memory: Memory, llm: ScriptedLLM) -> None:
    llm.push({"memories": [{"text": "Bob likes jazz"}]})
    bob = llm_memory.add("I like jazz.", user_id="bob")["results"][0]["id"]
    llm.push({"memories": [{"text": "Alice likes rock", "replaces": [1, 7]}]})
    llm_memory.add("I like rock. Jazz is fine.", user_id="alice")
    assert "superseded_by" not in llm_memory.get(bob)
    assert [i["id"] for i in llm_memory.get_all(user_id="bob")["results"]] == [bob]


def test_duplicates_of_existing_memories_are_dropped(llm_memory: Memory, llm: ScriptedLLM) -> None:
    llm.push({"memories": [{"text": "Alice is vegetarian"}]})
    llm_memory.add("I'm vegetarian.", user_id="alice")
    llm.push({"memories": [{"text": "Alice is vegetarian"}, {"text": "Alice is vegetarian"}]})
    assert llm_memory.add("As I said, vegetarian.", user_id="alice")["results"] == []
    assert len(llm_memory.get_all(user_id="alice")["results"]) == 1


def test_malformed_json_is_repaired_once(llm_memory: Memory, llm: ScriptedLLM) -> None:
    llm.malformed_next()
    llm.push('Sure! ```json\n{"memories": [{"text": "Alice has two cats",}],}\n```')
    out = llm_memory.add("I have two cats.", user_id="alice")
    assert [r["memory"] for r in out["results"]] == ["Alice has two cats"]
    assert len(llm.calls) == 2
    assert "invalid" in llm.calls[1].messages[-1]["content"]


def test_unusable_output_raises_and_writes_nothing(llm_memory: Memory, llm: ScriptedLLM) -> None:
    llm.push("no json here", {"memories": "not a list"})
    with pytest.raises(LLMError) as err:
        llm_memory.add("I have two cats.", user_id="alice")
    assert err.value.code == "llm_error" and err.value.hint
    assert llm_memory.get_all(user_id="alice")["results"] == []


def test_llm_exception_writes_nothing(llm_memory: Memory, llm: ScriptedLLM) -> None:
    llm.fail_next()
    with pytest.raises(LLMError):
        llm_memory.add("I have two cats.", user_id="alice")
    assert llm_memory.get_all(user_id="alice")["results"] == []
    llm.fail_next(RuntimeError("socket closed"))
    with pytest.raises(LLMError, match="socket closed"):
        llm_memory.add("I have two cats.", user_id="alice")


def test_custom_prompt_reaches_the_model(llm_memory: Memory, llm: ScriptedLLM) -> None:
    llm.push({"memories": []})
    llm_memory.add("I like tea.", user_id="alice", prompt="Only record food preferences.")
    assert "Only record food preferences." in llm.calls[0].messages[0]["content"]


def test_decide_strategy_update_supersedes_and_delete_is_soft(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM()
    mem = make_memory({"extraction": {"strategy": "decide"}}, llm=llm)
    llm.push({"facts": ["Alice lives in Berlin", "Alice has a dog"]})
    out = mem.add("I live in Berlin and have a dog.", user_id="alice")
    assert len(llm.calls) == 1  # nothing related yet: no decision call
    ids = {r["memory"]: r["id"] for r in out["results"]}
    llm.push(
        {"facts": ["Alice lives in Paris", "Alice no longer has a dog"]},
        lambda messages: {
            "memory": [
                {
                    "id": _number(messages, "Alice lives in Berlin"),
                    "event": "UPDATE",
                    "text": "Alice lives in Paris",
                },
                {"id": _number(messages, "Alice has a dog"), "event": "DELETE"},
            ]
        },
    )
    out = mem.add("I moved to Paris. My dog lives with my mum in Berlin now.", user_id="alice")
    events = sorted(r["event"] for r in out["results"])
    assert events == ["ADD", "DELETE", "SUPERSEDE"]
    assert [i["memory"] for i in mem.get_all(user_id="alice")["results"]] == [
        "Alice lives in Paris"
    ]
    dog = mem.get(ids["Alice has a dog"])
    assert dog is not None and dog["memory"] == "Alice has a dog"  # soft delete keeps it
    assert [e["event"] for e in mem.history(ids["Alice has a dog"])] == ["ADD", "DELETE"]


def _number(messages: list[dict], text: str) -> int:
    for line in messages[-1]["content"].splitlines():
        number, _, rest = line.partition(". ")
        if rest == text:
            return int(number)
    raise AssertionError(f"{text!r} not shown to the model")


def test_procedural_memory_needs_agent_and_summarises(make_memory: MakeMemory) -> None:
    llm = ScriptedLLM([{"summary": "Task: book a flight. Progress: searched, picked LH123."}])
    mem = make_memory(llm=llm)
    with pytest.raises(ValidationError, match="agent_id"):
        mem.add("ran search", user_id="alice", memory_type="procedural_memory")
    out = mem.add(
        [
            {"role": "user", "content": "Book a flight"},
            {"role": "assistant", "content": "Found LH123"},
        ],
        agent_id="travel-bot",
        memory_type="procedural_memory",
    )
    item = mem.get(out["results"][0]["id"])
    assert item["memory_type"] == "procedural_memory" and "LH123" in item["memory"]
    assert llm.calls[0].kwargs["response_format"].name == "ProceduralSummary"
    with pytest.raises(ValidationError):
        mem.add("x", agent_id="bot", memory_type="semantic")


def test_procedural_without_llm_is_a_config_error(memory: Memory) -> None:
    with pytest.raises(ConfigError):
        memory.add("ran search", agent_id="bot", memory_type="procedural_memory")


def test_offline_extractor_keeps_declarative_user_statements(memory: Memory) -> None:
    out = memory.add(
        [
            {
                "role": "user",
                "content": "Hi there! I adopted a cat named Miso last week. "
                "Do you like cats? Thanks.",
            },
            {"role": "assistant", "content": "I love cats. Miso is a lovely name."},
        ],
        user_id="alice",
    )
    assert [r["memory"] for r in out["results"]] == ["I adopted a cat named Miso last week."]


def test_image_parts_are_ignored_without_a_vision_llm(memory: Memory) -> None:
    out = memory.add(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "This is my new red bicycle."},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            }
        ],
        user_id="alice",
        infer=False,
    )
    assert [r["memory"] for r in out["results"]] == ["This is my new red bicycle."]


def test_vision_llm_describes_images(make_memory: MakeMemory) -> None:
    from memoweave.providers.llm import LLMCapabilities

    llm = ScriptedLLM(
        [{"description": "A red bicycle leaning on a wall."}],
        capabilities=LLMCapabilities(json_schema=True, vision=True),
    )
    llm.push(
        lambda messages: (
            {"memories": [{"text": "Alice owns a red bicycle"}]}
            if "[image: A red bicycle" in messages[1]["content"]
            else {"memories": []}
        )
    )
    mem = make_memory(llm=llm)
    out = mem.add(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look at this!"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            }
        ],
        user_id="alice",
    )
    assert [r["memory"] for r in out["results"]] == ["Alice owns a red bicycle"]
    assert llm.calls[0].kwargs["response_format"].name == "ImageDescription"
