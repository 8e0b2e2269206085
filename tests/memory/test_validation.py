"""Bad input is rejected with a typed error (code + hint) before anything is written."""

from __future__ import annotations

from typing import Any

import pytest

from memoweave import FilterError, MemoweaveError, ValidationError
from memoweave.memory import Memory


def _deep(depth: int) -> Any:
    """A value nesting dicts and lists ``2 * depth`` levels deep."""
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": [value]}
    return value


BAD_ADD_CALLS: list[tuple[str, Any, dict[str, Any]]] = [
    ("no scope", "I like tea.", {}),
    ("scope not a string", "I like tea.", {"user_id": 42}),
    ("scope padded", "I like tea.", {"user_id": " alice"}),
    ("scope empty", "I like tea.", {"user_id": ""}),
    ("scope too long", "I like tea.", {"user_id": "a" * 129}),
    ("scope control char", "I like tea.", {"user_id": "al\nice"}),
    ("messages wrong type", 42, {"user_id": "alice"}),
    ("messages empty", [], {"user_id": "alice"}),
    ("bad role", [{"role": "wizard", "content": "hi"}], {"user_id": "alice"}),
    ("content not text", [{"role": "user", "content": 5}], {"user_id": "alice"}),
    ("bad content part", [{"role": "user", "content": [{"type": "audio"}]}], {"user_id": "alice"}),
    ("metadata not dict", "I like tea.", {"user_id": "alice", "metadata": ["x"]}),
    ("metadata sets identity", "I like tea.", {"user_id": "alice", "metadata": {"user_id": "bob"}}),
    ("metadata sets actor", "I like tea.", {"user_id": "alice", "metadata": {"actor_id": "bob"}}),
    ("metadata reserved key", "I like tea.", {"user_id": "alice", "metadata": {"hash": "x"}}),
    ("metadata bad key", "I like tea.", {"user_id": "alice", "metadata": {"a-b": 1}}),
    ("metadata not json", "I like tea.", {"user_id": "alice", "metadata": {"x": object()}}),
    ("infer not bool", "I like tea.", {"user_id": "alice", "infer": "yes"}),
    ("bad expiration", "I like tea.", {"user_id": "alice", "expiration_date": "next week"}),
    ("bad memory type", "I like tea.", {"user_id": "alice", "memory_type": "episodic"}),
    ("prompt not str", "I like tea.", {"user_id": "alice", "prompt": 3}),
    # issue 9, item 8: hostile values that used to raise tracebacks or be mangled
    ("lone surrogate", "I like \udcff tea.", {"user_id": "alice"}),
    ("surrogate in part", [{"role": "user", "content": [{"type": "text", "text": "\ud800"}]}],
     {"user_id": "alice"}),
    ("surrogate in prompt", "I like tea.", {"user_id": "alice", "prompt": "x\udc80"}),
    ("surrogate in id", "I like tea.", {"user_id": "al\udcffice"}),
    ("line separator in id", "I like tea.", {"user_id": "alice\u2028"}),
    ("zero-width space in id", "I like tea.", {"user_id": "ali\u200bce"}),
    ("bidi override in id", "I like tea.", {"user_id": "\u202ealice"}),
    ("message id too long", [{"role": "user", "content": "hi there", "id": "m" * 100_000}],
     {"user_id": "alice"}),
    ("message id zero-width", [{"role": "user", "content": "hi there", "id": "m\u200b"}],
     {"user_id": "alice"}),
    ("message id huge int", [{"role": "user", "content": "hi there", "id": 10**200}],
     {"user_id": "alice"}),
    ("created_at garbage", [{"role": "user", "content": "hi there", "created_at": "garbage"}],
     {"user_id": "alice"}),
    ("metadata nested deep", "I like tea.", {"user_id": "alice", "metadata": {"x": _deep(5000)}}),
    ("metadata int beyond int64", "I like tea.", {"user_id": "alice", "metadata": {"n": 2**63}}),
    ("metadata nan", "I like tea.", {"user_id": "alice", "metadata": {"f": float("nan")}}),
    ("metadata inf", "I like tea.", {"user_id": "alice", "metadata": {"f": [float("inf")]}}),
    ("metadata surrogate", "I like tea.", {"user_id": "alice", "metadata": {"s": "\udcff"}}),
    ("metadata non-string key", "I like tea.", {"user_id": "alice", "metadata": {"d": {1: 2}}}),
    ("text beyond the limit", "x" * 200_001, {"user_id": "alice"}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "messages", "kwargs"), BAD_ADD_CALLS, ids=[c[0] for c in BAD_ADD_CALLS]
)
def test_bad_add_is_rejected_and_writes_nothing(
    memory: Memory, case: str, messages: Any, kwargs: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError) as err:
        memory.add(messages, **kwargs)
    assert err.value.code == "validation_error" and err.value.hint
    assert memory.get_all(user_id="alice")["results"] == []


@pytest.mark.parametrize(
    "kwargs",
    [
        {"query": "", "filters": {"user_id": "alice"}},
        {"query": 5, "filters": {"user_id": "alice"}},
        {"query": "x" * 9000, "filters": {"user_id": "alice"}},
        {"query": "tea"},
        {"query": "tea", "filters": {"user_id": {"in": ["alice", "bob"]}}},
        {"query": "tea", "filters": {"user_id": "alice"}, "top_k": 0},
        {"query": "tea", "filters": {"user_id": "alice"}, "top_k": True},
        {"query": "tea", "filters": {"user_id": "alice"}, "threshold": "high"},
        {"query": "tea", "filters": {"user_id": "alice"}, "rerank": 1},
        {"query": "tea", "filters": "user_id=alice"},
        {"query": "tea", "filters": {"user_id": "alice"}, "user_id": "bob"},
        {"query": "tea \udcff", "filters": {"user_id": "alice"}},
        {"query": "tea", "filters": {"user_id": "alice", "x": _deep(5000)}},
        {"query": "tea", "filters": {"user_id": "alice", "OR": [_deep(40)]}},
    ],
)
def test_bad_search_is_rejected(memory: Memory, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        memory.search(**kwargs)


def test_invalid_filter_points_at_the_node(memory: Memory) -> None:
    with pytest.raises(FilterError) as err:
        memory.search(
            "tea",
            filters={"user_id": "alice", "OR": [{"n": {"gt": 1}}, {"n": {"between": [1, 2]}}]},
        )
    assert err.value.details["path"].startswith("$.OR[1]")


@pytest.mark.parametrize(
    "bad_id", ["", "not-a-uuid", 42, None, "6F9619FF-8B86-D011-B42D-00C04FC964FF"]
)
def test_bad_memory_ids(memory: Memory, bad_id: Any) -> None:
    for call in (memory.get, memory.delete, memory.history):
        with pytest.raises(ValidationError):
            call(bad_id)
    with pytest.raises(ValidationError):
        memory.update(bad_id, text="x")


def test_update_needs_something_to_change(memory: Memory) -> None:
    memory_id = memory.add("I like tea.", user_id="alice")["results"][0]["id"]
    for kwargs in (
        {},
        {"text": "  "},
        {"text": "a", "data": "b"},
        {"metadata": {"run_id": "r"}},
        {"text": "bad \ud800 text"},
        {"text": "x" * 200_001},
        {"metadata": {"deep": _deep(5000)}},
    ):
        with pytest.raises(ValidationError):
            memory.update(memory_id, **kwargs)
    assert memory.get(memory_id)["memory"] == "I like tea."


def test_tenants_never_see_each_other(memory: Memory) -> None:
    alice = memory.add("My bank PIN hint is the cat's name.", user_id="alice")["results"][0]["id"]
    memory.add("I like jazz.", user_id="alice2", infer=False)
    assert memory.search("bank PIN cat", user_id="bob")["results"] == []
    assert memory.get_all(user_id="Alice")["results"] == []
    assert [r["memory"] for r in memory.get_all(user_id="alice2")["results"]] == ["I like jazz."]
    assert memory.get(alice, user_id="bob") is None
    with pytest.raises(MemoweaveError):
        memory.delete(alice, user_id="bob")
    with pytest.raises(MemoweaveError):
        memory.update(alice, text="hacked", user_id="bob")
    assert memory.get(alice)["memory"] == "My bank PIN hint is the cat's name."
    memory.delete_all(user_id="bob")
    assert memory.get(alice) is not None


def test_agent_and_run_scopes_nest(memory: Memory) -> None:
    memory.add(
        "Support ticket 17 is about billing.",
        user_id="alice",
        agent_id="support",
        run_id="r1",
        infer=False,
    )
    memory.add("Sales call went well today.", user_id="alice", agent_id="sales", infer=False)
    assert len(memory.get_all(user_id="alice")["results"]) == 2
    assert [r["memory"] for r in memory.get_all(agent_id="support")["results"]] == [
        "Support ticket 17 is about billing."
    ]
    assert memory.get_all(user_id="alice", run_id="r2")["results"] == []
