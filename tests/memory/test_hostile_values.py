"""Hostile but valid values are kept exactly or normalised as documented, never mangled
(issue 9, items 8 and 10); a home that is a file is a typed error."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoweave import HistoryError, ValidationError
from memoweave.memory import Memory
from memoweave.testing.doubles import HashingEmbedder

from .conftest import MakeMemory

ODD_IDS = ["alice|agent_id=bot", "a=b/c", "北京", "emoji 🧠", 'quote"d', "back\\slash", "x" * 128]


@pytest.mark.parametrize("user_id", ODD_IDS)
def test_odd_but_valid_ids_round_trip_and_stay_apart(memory: Memory, user_id: str) -> None:
    memory.add("I keep bees on the roof.", user_id=user_id, infer=False)
    memory.add("I keep goats in the yard.", user_id="alice", infer=False)
    (item,) = memory.get_all(user_id=user_id)["results"]
    assert item["user_id"] == user_id and item["memory"] == "I keep bees on the roof."
    hits = memory.search("keep goats", user_id=user_id)["results"]
    assert [h["memory"] for h in hits] == ["I keep bees on the roof."]


def test_large_integers_within_64_bits_and_unicode_metadata_are_kept(memory: Memory) -> None:
    meta = {"big": 2**63 - 1, "small": -(2**63), "text": "北京 🧠", "nested": {"a": [1, 2.5]}}
    memory_id = memory.add("I like tea.", user_id="alice", metadata=meta, infer=False)["results"][
        0
    ]["id"]
    assert memory.get(memory_id)["metadata"] == meta


def test_control_characters_are_not_stored_in_memory_texts(memory: Memory) -> None:
    out = memory.add("I like\x1b[2J tea\x00 and\x07 cake\u009b.", user_id="alice", infer=False)
    memory_id = out["results"][0]["id"]
    assert memory.get(memory_id)["memory"] == "I like [2J tea and cake ."
    memory.update(memory_id, "now\x1b]0;pwned\x07 coffee")
    assert memory.get(memory_id)["memory"] == "now ]0;pwned coffee"


def test_message_created_at_is_normalised_to_utc(make_memory: MakeMemory) -> None:
    from memoweave.testing.doubles import ScriptedLLM

    llm = ScriptedLLM(default={"memories": []})
    mem = make_memory(llm=llm)
    mem.add(
        [
            {"role": "user", "content": "first", "created_at": "2024-01-01T10:00:00+02:00"},
            {"role": "user", "content": "second", "created_at": "2024-01-01T09:30:00Z"},
        ],
        user_id="alice",
    )
    mem.add("third", user_id="alice")
    prompt = "\n".join(str(m["content"]) for m in llm.calls[1].messages)
    assert prompt.index("first") < prompt.index("second")  # 08:00 UTC before 09:30 UTC


def test_a_home_that_is_a_file_is_a_typed_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("MEMOWEAVE_HOME", str(home))
    with pytest.raises(HistoryError) as err:
        Memory(embedder=HashingEmbedder(dims=8))
    assert "MEMOWEAVE_HOME" in err.value.hint


def test_the_text_limit_is_configurable(make_memory: MakeMemory) -> None:
    mem = make_memory({"limits": {"max_text_chars": 50}})
    with pytest.raises(ValidationError, match="the limit is 50"):
        mem.add("x" * 51, user_id="alice", infer=False)
    memory_id = mem.add("y" * 50, user_id="alice", infer=False)["results"][0]["id"]
    with pytest.raises(ValidationError, match=r"limits\.max_text_chars"):
        mem.update(memory_id, "z" * 51)
    assert mem.get(memory_id)["memory"] == "y" * 50
