"""The public methods and their mem0-compatible shapes."""

from __future__ import annotations

import pytest

from memoweave import NotFound, ValidationError
from memoweave.memory import Memory


def test_add_verbatim_returns_results_and_stores_each_message(memory: Memory) -> None:
    out = memory.add(
        [
            {"role": "system", "content": "be nice"},
            {"role": "user", "content": "I am vegetarian", "name": "alice_w", "id": "m1"},
            {"role": "assistant", "content": "Noted, no meat."},
        ],
        user_id="alice",
        infer=False,
    )
    assert [r["event"] for r in out["results"]] == ["ADD", "ADD"]
    assert [r["memory"] for r in out["results"]] == ["I am vegetarian", "Noted, no meat."]
    items = memory.get_all(filters={"user_id": "alice"})["results"]
    by_text = {i["memory"]: i for i in items}
    assert by_text["I am vegetarian"]["actor_id"] == "alice_w"
    assert by_text["I am vegetarian"]["role"] == "user"
    assert by_text["I am vegetarian"]["source_message_ids"] == ["m1"]
    assert by_text["Noted, no meat."]["role"] == "assistant"


def test_item_fields_follow_mem0(memory: Memory) -> None:
    out = memory.add("I moved to Berlin in May 2023.", user_id="alice", metadata={"topic": "home"})
    item = memory.get(out["results"][0]["id"])
    assert item is not None
    for key in ("id", "memory", "hash", "metadata", "created_at", "updated_at", "user_id"):
        assert key in item
    assert item["metadata"] == {"topic": "home"}
    assert item["memory"] == "I moved to Berlin in May 2023."


def test_search_returns_scored_items_in_scope(memory: Memory) -> None:
    memory.add("I love hiking in the Alps with my dog.", user_id="alice", infer=False)
    memory.add("My favourite food is ramen noodles.", user_id="alice", infer=False)
    memory.add("I love hiking too, in the Rockies.", user_id="bob", infer=False)
    results = memory.search("hiking Alps", filters={"user_id": "alice"}, top_k=5)["results"]
    assert results and results[0]["memory"].startswith("I love hiking in the Alps")
    assert all(r["user_id"] == "alice" for r in results)
    assert all(isinstance(r["score"], float) for r in results)
    assert results == sorted(results, key=lambda r: -r["score"])


def test_search_accepts_mem0_style_scope_arguments(memory: Memory) -> None:
    memory.add("I play the violin.", user_id="alice", infer=False)
    assert memory.search("violin", user_id="alice")["results"][0]["memory"] == "I play the violin."


def test_keyword_only_match_is_returned(memory: Memory) -> None:
    memory.add("Quetzalcoatl is the name of my iguana.", user_id="alice", infer=False)
    for i in range(30):
        memory.add(f"Filler memory number {i} about weather.", user_id="alice", infer=False)
    results = memory.search("quetzalcoatl", user_id="alice", top_k=3, explain=True)["results"]
    assert results[0]["memory"].startswith("Quetzalcoatl")
    assert "keyword" in results[0]["explain"]


def test_update_changes_text_and_records_history(memory: Memory) -> None:
    memory_id = memory.add("I am vegetarian.", user_id="alice")["results"][0]["id"]
    out = memory.update(memory_id, text="I am vegan.")
    assert out["memory"] == "I am vegan."
    assert memory.get(memory_id)["memory"] == "I am vegan."
    events = memory.history(memory_id)
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]
    assert (
        events[1]["old_memory"] == "I am vegetarian." and events[1]["new_memory"] == "I am vegan."
    )
    assert memory.search("vegan", user_id="alice")["results"][0]["id"] == memory_id


def test_update_metadata_keeps_identity(memory: Memory) -> None:
    memory_id = memory.add("I like tea.", user_id="alice")["results"][0]["id"]
    memory.update(memory_id, metadata={"mood": "calm"})
    item = memory.get(memory_id)
    assert item["metadata"] == {"mood": "calm"} and item["user_id"] == "alice"
    with pytest.raises(ValidationError) as err:
        memory.update(memory_id, metadata={"user_id": "mallory"})
    assert err.value.code == "validation_error"
    assert memory.get(memory_id)["user_id"] == "alice"


def test_delete_is_hard_and_recorded(memory: Memory) -> None:
    memory_id = memory.add("I own a red bicycle.", user_id="alice")["results"][0]["id"]
    assert memory.delete(memory_id) == {"message": "Memory deleted successfully!"}
    assert memory.get(memory_id) is None
    assert [e["event"] for e in memory.history(memory_id)] == ["ADD", "DELETE"]
    assert memory.search("bicycle", user_id="alice")["results"] == []
    with pytest.raises(NotFound):
        memory.delete(memory_id)


def test_delete_all_only_touches_the_scope(memory: Memory) -> None:
    for i in range(7):
        memory.add(f"Alice fact number {i} is here.", user_id="alice", infer=False)
    memory.add("Bob fact stays here.", user_id="bob", infer=False)
    memory.delete_all(user_id="alice")
    assert memory.get_all(user_id="alice")["results"] == []
    assert len(memory.get_all(user_id="bob")["results"]) == 1


def test_get_all_paginates_with_cursor(memory: Memory) -> None:
    for i in range(12):
        memory.add(f"Statement number {i} about things.", user_id="alice", infer=False)
    seen: list[str] = []
    cursor = None
    while True:
        page = memory.get_all(user_id="alice", top_k=5, cursor=cursor)
        seen += [r["id"] for r in page["results"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 12 == len(set(seen))


def test_filters_agree_between_search_and_get_all(memory: Memory) -> None:
    memory.add(
        "I like green tea a lot.", user_id="alice", metadata={"kind": "drink", "n": 1}, infer=False
    )
    memory.add(
        "I like black coffee a lot.",
        user_id="alice",
        metadata={"kind": "drink", "n": 5},
        infer=False,
    )
    memory.add(
        "I like apples a lot.", user_id="alice", metadata={"kind": "food", "n": 3}, infer=False
    )
    filters = {"user_id": "alice", "kind": "drink", "n": {"gte": 2}}
    listed = {r["id"] for r in memory.get_all(filters=filters)["results"]}
    searched = {r["id"] for r in memory.search("I like", filters=filters)["results"]}
    assert listed == searched and len(listed) == 1


def test_expired_memories_are_hidden_unless_asked(memory: Memory) -> None:
    memory.add(
        "Temporary discount code is SPRING.",
        user_id="alice",
        expiration_date="2001-01-01",
        infer=False,
    )
    memory.add("Permanent fact about spring.", user_id="alice", infer=False)
    assert len(memory.get_all(user_id="alice")["results"]) == 1
    assert len(memory.get_all(user_id="alice", show_expired=True)["results"]) == 2
    hits = memory.search("spring discount", user_id="alice", show_expired=True)["results"]
    assert any("SPRING" in h["memory"] for h in hits)
    assert all(
        "SPRING" not in h["memory"] for h in memory.search("spring", user_id="alice")["results"]
    )


def test_reset_empties_everything(memory: Memory) -> None:
    memory_id = memory.add("I like chess.", user_id="alice")["results"][0]["id"]
    memory.reset()
    assert memory.get(memory_id) is None
    assert memory.history(memory_id) == []
    memory.add("I like go.", user_id="alice")
    assert len(memory.get_all(user_id="alice")["results"]) == 1


def test_cjk_text_round_trips_and_is_searchable(memory: Memory) -> None:
    memory.add("我喜欢在北京吃烤鸭。", user_id="李雷", infer=False)
    memory.add("東京で寿司を食べるのが好きです。", user_id="李雷", infer=False)
    hits = memory.search("北京烤鸭", user_id="李雷")["results"]
    assert hits[0]["memory"] == "我喜欢在北京吃烤鸭。"
    assert memory.search("寿司", user_id="李雷")["results"][0]["memory"].startswith("東京")


def test_exact_duplicates_are_not_stored_twice(memory: Memory) -> None:
    memory.add("I am allergic to peanuts.", user_id="alice", infer=False)
    second = memory.add("I am allergic to  peanuts.", user_id="alice", infer=False)
    assert second["results"] == []
    assert len(memory.get_all(user_id="alice")["results"]) == 1


def test_from_config_yaml(tmp_path, monkeypatch) -> None:
    path = tmp_path / "memoweave.yaml"
    path.write_text(
        "vector_store:\n  provider: memory\n"
        "history_db_path: ${HIST_DIR}/h.db\n"
        "extraction:\n  window_messages: 2\n"
    )
    monkeypatch.setenv("HIST_DIR", str(tmp_path))
    from memoweave.testing.doubles import HashingEmbedder

    mem = Memory(str(path), embedder=HashingEmbedder())
    try:
        mem.add("I collect stamps from Peru.", user_id="alice")
        assert mem.get_all(user_id="alice")["results"][0]["memory"] == "I collect stamps from Peru."
        assert (tmp_path / "h.db").exists()
    finally:
        mem.close()
