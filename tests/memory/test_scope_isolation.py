"""Tenants never see each other's data, whatever characters their ids contain (issue 9,
item 1): the message window, keyword and entity caches, and history schema migration."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memoweave.memory import Memory
from memoweave.memory.history import HistoryStore
from memoweave.memory.history_schema import SCHEMA_VERSION
from memoweave.memory.scope import Scope
from memoweave.testing.doubles import ScriptedLLM

from .conftest import MakeMemory


def _prompt_text(llm: ScriptedLLM, call: int) -> str:
    return "\n".join(str(m.get("content")) for m in llm.calls[call].messages)


def test_a_joined_looking_user_id_never_sees_another_scopes_window(
    make_memory: MakeMemory,
) -> None:
    llm = ScriptedLLM(default={"memories": []})
    mem = make_memory(llm=llm)
    mem.add(
        [{"role": "user", "content": "bot secret: the launch code is 0000", "id": "m1"}],
        user_id="alice",
        agent_id="bot",
    )
    mem.add(
        [{"role": "user", "content": "hello from the hostile tenant", "id": "m1"}],
        user_id="alice|agent_id=bot",
    )
    mem.add("what do you know?", user_id="alice|agent_id=bot")
    hostile_prompt = _prompt_text(llm, 2)
    assert "launch code" not in hostile_prompt
    assert "hello from the hostile tenant" in hostile_prompt
    mem.add("and me?", user_id="alice", agent_id="bot")
    owner_prompt = _prompt_text(llm, 3)
    assert "launch code" in owner_prompt  # the equal message id "m1" did not drop it
    assert "hostile tenant" not in owner_prompt


def test_scope_keys_are_unambiguous() -> None:
    scopes = [
        Scope(user_id="alice", agent_id="bot"),
        Scope(user_id="alice|agent_id=bot"),
        Scope(user_id='alice","bot'),
        Scope(user_id="alice", run_id="bot"),
        Scope(agent_id="alice", user_id="bot"),
        Scope(user_id="null"),
        Scope(agent_id="null"),
    ]
    assert len({s.key() for s in scopes}) == len(scopes)


def test_keyword_and_entity_signals_never_cross_scopes(memory: Memory) -> None:
    memory.add("Caroline adopted a dog named Biscuit", user_id="a=b", infer=False)
    memory.add("Caroline adopted a cat named Biscuit", user_id="a", agent_id="b", infer=False)
    for kwargs in ({"user_id": "a=b"}, {"user_id": "a", "agent_id": "b"}, {"agent_id": "b"}):
        hits = memory.search("Caroline Biscuit", **kwargs)["results"]
        assert len(hits) == 1, kwargs
    assert memory.search("Caroline Biscuit", user_id="a")["results"][0]["memory"].startswith(
        "Caroline adopted a cat"
    )
    assert all("dog" not in h["memory"] for h in memory.search("dog", user_id="a")["results"])


def _v0_database(path: Path) -> None:
    """A history file with wave 1's message table (joined scope keys)."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE messages (
            id TEXT PRIMARY KEY, scope TEXT NOT NULL, user_id TEXT, agent_id TEXT,
            run_id TEXT, role TEXT NOT NULL, name TEXT, content TEXT NOT NULL,
            created_at TEXT NOT NULL, op_id TEXT NOT NULL, seq INTEGER NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending');
        CREATE INDEX messages_scope ON messages(scope, status, created_at, seq);
        CREATE INDEX messages_op ON messages(op_id);
        CREATE TABLE history (id TEXT PRIMARY KEY, memory_id TEXT NOT NULL, old_memory TEXT,
            new_memory TEXT, event TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT,
            is_deleted INTEGER NOT NULL DEFAULT 0, actor_id TEXT, role TEXT, user_id TEXT,
            agent_id TEXT, run_id TEXT, superseded_by TEXT, op_id TEXT NOT NULL,
            seq INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'pending');
        """
    )
    rows = [
        ("user_id=alice|agent_id=bot#m1", "user_id=alice|agent_id=bot", "alice", "bot", None,
         "user", None, "bot secret", "2024-01-01T00:00:00+00:00", "op1", 0, "committed"),
        ("user_id=alice|agent_id=bot#m2", "user_id=alice|agent_id=bot", "alice", "bot", None,
         "assistant", None, "noted", "2024-01-01T00:00:01+00:00", "op1", 1, "committed"),
        ("user_id=alice#x#y", "user_id=alice", "alice", None, None,
         "user", "al", "hash in the id", "2024-01-02T00:00:00+00:00", "op2", 0, "committed"),
    ]  # fmt: skip
    conn.executemany(f"INSERT INTO messages VALUES ({', '.join('?' * 12)})", rows)
    conn.commit()
    conn.close()


def test_a_wave1_history_file_migrates_without_losing_messages(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    _v0_database(path)
    history = HistoryStore(path)
    try:
        assert not history.created
        bot = history.recent_messages(Scope(user_id="alice", agent_id="bot").key(), 10)
        assert [(m.id, m.content) for m in bot] == [("m1", "bot secret"), ("m2", "noted")]
        alice = history.recent_messages(Scope(user_id="alice").key(), 10)
        assert [(m.id, m.name) for m in alice] == [("x#y", "al")]
        version = history.connection.execute("PRAGMA user_version").fetchone()[0]
        assert version == SCHEMA_VERSION
    finally:
        history.close()
    again = HistoryStore(path)  # reopening a migrated file changes nothing
    try:
        assert len(again.recent_messages(Scope(user_id="alice", agent_id="bot").key(), 10)) == 2
    finally:
        again.close()


def test_history_is_scoped_like_get(memory: Memory) -> None:
    """Issue 9, item 12: another scope's memory has no history for the caller."""
    memory_id = memory.add("I like tea.", user_id="alice", infer=False)["results"][0]["id"]
    memory.update(memory_id, "I like green tea.")
    assert [e["event"] for e in memory.history(memory_id, user_id="alice")] == ["ADD", "UPDATE"]
    assert memory.history(memory_id, user_id="bob") == []
    assert memory.history(memory_id, user_id="alice", agent_id="bot") == []
    assert memory.history(memory_id, user_id="alice|agent_id=bot") == []
    memory.delete(memory_id, user_id="alice")
    events = memory.history(memory_id, user_id="alice")  # kept after a delete, in scope
    assert [e["event"] for e in events] == ["ADD", "UPDATE", "DELETE"]
    assert memory.history(memory_id, user_id="bob") == []
    assert len(memory.history(memory_id)) == 3  # no scope given: mem0's behaviour
