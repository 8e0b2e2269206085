"""Every MCP tool through the SDK's in-memory client: listing, annotations, instructions,
results, errors, and scopes that tool arguments cannot change."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from memoweave_mcp.scope import ToolScope
from memoweave_mcp.tools import build_server

from memoweave.memory.scope import Scope
from memoweave.testing.doubles import ScriptedLLM

pytestmark = pytest.mark.anyio
TOOLS = {"add_memory", "search_memories", "get_memory", "list_memories", "update_memory",
         "delete_memory", "memory_history"}  # fmt: skip


def _server(service: Any, user: str = "alice") -> Any:
    return build_server(service, ToolScope(Scope(user_id=user)))


async def _call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    return result.structured_content


async def test_tools_are_listed_with_annotations_and_instructions(make_service: Any) -> None:
    async with Client(_server(make_service()), raise_exceptions=True) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        for name in ("search_memories", "get_memory", "list_memories", "memory_history"):
            assert tools[name].annotations.read_only_hint is True
        for name in ("delete_memory", "update_memory"):
            assert tools[name].annotations.destructive_hint is True
        assert tools["add_memory"].annotations.destructive_hint is False
        for tool in tools.values():
            assert tool.description and len(tool.description) > 40
            assert not {"user_id", "agent_id", "run_id"} & set(tool.input_schema["properties"])
        assert "search_memories" in client.instructions and "add_memory" in client.instructions


async def test_add_search_get_list_update_delete(make_service: Any) -> None:
    async with Client(_server(make_service()), raise_exceptions=True) as client:
        added = await _call(client, "add_memory", text="I moved to Lisbon in May 2023.",
                            metadata={"topic": "home"})  # fmt: skip
        (change,) = added["changes"]
        assert change["event"] == "ADD"
        await _call(client, "add_memory", text="My favourite food is grilled sardines.")
        found = await _call(client, "search_memories", query="where does she live", limit=2)
        assert found["results"][0]["id"] == change["id"] and "score" in found["results"][0]
        item = await _call(client, "get_memory", memory_id=change["id"])
        assert item["memory"] == "I moved to Lisbon in May 2023."
        assert item["metadata"] == {"topic": "home"}
        page = await _call(client, "list_memories", limit=1)
        assert len(page["results"]) == 1 and page["next_cursor"]
        updated = await _call(client, "update_memory", memory_id=change["id"],
                              text="I have lived in Lisbon since May 2023.")  # fmt: skip
        assert updated["memory"] == "I have lived in Lisbon since May 2023."
        history = await _call(client, "memory_history", memory_id=change["id"])
        assert [e["event"] for e in history["events"]] == ["ADD", "UPDATE"]
        assert (await _call(client, "delete_memory", memory_id=change["id"]))["message"]
        gone = await client.call_tool("get_memory", {"memory_id": change["id"]})
        assert gone.is_error and "no memory with id" in gone.content[0].text


async def test_history_shows_the_supersession_chain(make_service: Any) -> None:
    llm = ScriptedLLM()
    async with Client(_server(make_service(llm=llm)), raise_exceptions=True) as client:
        llm.push({"memories": [{"text": "Alice works at Acme"}]})
        first = (await _call(client, "add_memory", text="I work at Acme."))["changes"][0]["id"]
        llm.push({"memories": [{"text": "Alice works at Globex", "replaces": [1]}]})
        await _call(client, "add_memory", text="I now work at Globex.")
        llm.push({"memories": [{"text": "Alice works at Initech", "replaces": [1]}]})
        await _call(client, "add_memory", text="I left Globex for Initech.")
        history = await _call(client, "memory_history", memory_id=first)
        assert [e["event"] for e in history["events"]] == ["ADD", "SUPERSEDE"]
        chain = [m["memory"] for m in history["superseded_by_chain"]]
        assert chain == ["Alice works at Globex", "Alice works at Initech"]


async def test_bad_arguments_are_tool_errors_the_model_can_read(make_service: Any) -> None:
    async with Client(_server(make_service()), raise_exceptions=True) as client:
        for tool, args in [
            ("get_memory", {"memory_id": "not-a-uuid"}),
            ("search_memories", {"query": ""}),
            ("search_memories", {"query": "x", "limit": 500}),
            ("add_memory", {"text": "ok text here", "metadata": {"user_id": "bob"}}),
            ("update_memory", {"memory_id": "not-a-uuid", "text": "x"}),
        ]:
            result = await client.call_tool(tool, args)
            assert result.is_error, (tool, args)
            assert result.content[0].text


async def test_one_scope_never_sees_another(make_service: Any) -> None:
    service = make_service()
    async with Client(_server(service, "bob"), raise_exceptions=True) as bob:
        secret = (await _call(bob, "add_memory", text="Bob's bank PIN is 4321."))["changes"][0]
    async with Client(_server(service, "alice"), raise_exceptions=True) as alice:
        for tool, args in [
            ("get_memory", {"memory_id": secret["id"]}),
            ("memory_history", {"memory_id": secret["id"]}),
            ("update_memory", {"memory_id": secret["id"], "text": "hacked"}),
            ("delete_memory", {"memory_id": secret["id"]}),
        ]:
            result = await alice.call_tool(tool, args)
            assert result.is_error and "no memory with id" in result.content[0].text
            assert "4321" not in str(result.content)
        found = await _call(alice, "search_memories", query="bank PIN")
        assert found["results"] == []
        # a scope argument the schema does not have changes nothing
        await alice.call_tool("add_memory", {"text": "Alice likes tea a lot.", "user_id": "bob"})
        assert (await _call(alice, "list_memories"))["results"][0]["memory"] == (
            "Alice likes tea a lot."
        )
    async with Client(_server(service, "bob"), raise_exceptions=True) as bob:
        mine = await _call(bob, "list_memories")
        assert [m["memory"] for m in mine["results"]] == ["Bob's bank PIN is 4321."]


async def test_no_scope_is_a_clear_error(make_service: Any) -> None:
    async with Client(build_server(make_service(), ToolScope()), raise_exceptions=True) as c:
        result = await c.call_tool("list_memories", {})
        assert result.is_error and "--user-id" in result.content[0].text


async def test_search_returns_the_scopes_relations_with_a_graph_store(make_service: Any) -> None:
    service = make_service(config={"graph_store": {"provider": "memory"}})
    async with Client(_server(service, "bob"), raise_exceptions=True) as bob:
        await _call(bob, "add_memory", text="Caroline went camping with Jonas.")
    async with Client(_server(service), raise_exceptions=True) as client:
        added = await _call(client, "add_memory", text="Caroline went hiking with Melanie.")
        found = await _call(client, "search_memories", query="What does Caroline do?")
        assert found["relations"] == [
            {
                "source": "caroline",
                "relationship": "co_mentioned",
                "destination": "melanie",
                "hop": 1,
                "memory_ids": [added["changes"][0]["id"]],
            }
        ]
    async with Client(_server(make_service()), raise_exceptions=True) as plain:
        await _call(plain, "add_memory", text="Caroline went hiking with Melanie.")
        assert "relations" not in await _call(plain, "search_memories", query="Caroline")


async def test_search_asks_the_reranker_when_the_server_was_built_with_rerank(
    make_service: Any,
) -> None:
    from memoweave_onnx.cross_encoder import OnnxCrossEncoder

    service = make_service(reranker=OnnxCrossEncoder())
    query = {"query": "How did the half marathon go?", "limit": 3}
    async with Client(_server(service), raise_exceptions=True) as plain:
        for text in ("I signed up for the Lisbon half marathon.",
                     "I finished the Lisbon half marathon in 1:58.",
                     "My sister Ana is a nurse in Porto."):  # fmt: skip
            await _call(plain, "add_memory", text=text)
        first_pass = (await _call(plain, "search_memories", **query))["results"]
    server = build_server(service, ToolScope(Scope(user_id="alice")), rerank=True)
    async with Client(server, raise_exceptions=True) as client:
        reranked = (await _call(client, "search_memories", **query))["results"]
    assert reranked[0]["memory"] == "I finished the Lisbon half marathon in 1:58."
    # the cross-encoder's probability is fused into every reranked score
    assert [r["score"] for r in reranked] != [r["score"] for r in first_pass]
