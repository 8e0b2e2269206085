"""The MCP server: seven memory tools with annotations, and instructions for the model.

Every tool works in the session's scope (:class:`~memoweave_mcp.scope.ToolScope`); a
memory id outside it is "not found", as if it did not exist. Errors are tool errors the
model can read (``message (hint: ...)``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from memoweave_server.service import MemoryService
from pydantic import Field

from memoweave.errors import MemoweaveError, NotFound
from memoweave_mcp.scope import ToolScope

INSTRUCTIONS = """\
You have a long-term memory of this user (or agent) that lasts across conversations.

Search before you answer: when a question may depend on something said earlier
(preferences, facts about the person, past decisions, names, dates), call search_memories
with a short query first, and use what it returns.

Save what will matter later: when the user states a lasting fact, a preference, a plan or
a change ("I moved to Lisbon", "I'm vegetarian now"), call add_memory with it in their
words. Do not save greetings, small talk, or what is only true for this turn. A changed
fact supersedes the old one by itself: add the new fact, do not delete the old one.

Use update_memory only to correct a memory's wording, delete_memory only when the user
asks to forget something, and memory_history to see how a memory changed over time.
"""

F = TypeVar("F", bound=Callable[..., Any])
_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
MemoryId = Annotated[str, Field(description="The id a previous tool result gave.")]
_HISTORY_CHAIN_LIMIT = 20


def _model_readable(tool: F) -> F:
    """Raise memoweave errors as ``ToolError``: the model reads ``message (hint: ...)``.
    (The SDK hides any other exception's text from the client.)"""

    @functools.wraps(tool)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await tool(*args, **kwargs)
        except MemoweaveError as exc:
            raise ToolError(str(exc)) from exc

    return call  # type: ignore[return-value]  # functools.wraps keeps the signature


def _brief(item: dict[str, Any]) -> dict[str, Any]:
    """The fields a model needs from one memory."""
    keys = ("id", "memory", "score", "observed_at", "created_at", "updated_at", "metadata",
            "superseded_by")  # fmt: skip
    return {k: item[k] for k in keys if item.get(k) not in (None, {}, [])}


def build_server(service: MemoryService, scope: ToolScope, *, rerank: bool = False) -> MCPServer:
    """An ``MCPServer`` whose tools call ``service`` within ``scope``; with ``rerank``,
    ``search_memories`` asks the service's reranker (``search(rerank=True)``)."""
    server = MCPServer("memoweave", instructions=INSTRUCTIONS)

    def resolve(ctx: Context) -> dict[str, str]:
        return scope.resolve(ctx.headers)[1]

    async def visible(ctx: Context, memory_id: str) -> dict[str, Any]:
        item = await service.get(memory_id, **resolve(ctx))
        if item is None:
            raise NotFound(f"no memory with id {memory_id}")
        return item

    @server.tool(
        title="Save a memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False,
            open_world_hint=False,
        ),
    )  # fmt: skip
    @_model_readable
    async def add_memory(
        text: Annotated[str, Field(description="What to remember, in the user's words.")],
        ctx: Context,
        metadata: Annotated[
            dict[str, Any] | None, Field(description="Optional tags, e.g. {'topic': 'travel'}.")
        ] = None,
    ) -> dict[str, Any]:
        """Remember a lasting fact, preference or plan. Returns what changed: ADD for a new
        memory, SUPERSEDE when it replaces an older one, nothing when it is already known."""
        result = await service.add(
            [{"role": "user", "content": text}], metadata=metadata, **resolve(ctx)
        )
        return {"changes": result["results"]}

    @server.tool(title="Search memories", annotations=_READ)
    @_model_readable
    async def search_memories(
        query: Annotated[str, Field(description="A short question or keywords.")],
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=50, description="How many results.")] = 10,
    ) -> dict[str, Any]:
        """Find the memories most relevant to a question, best first. The score is
        comparable across queries (higher is more relevant). With a graph store, also the
        relations (source, relationship, destination) the question's names lead to."""
        result = await service.search(query, top_k=limit, rerank=rerank, **resolve(ctx))
        found = {"results": [_brief(hit) for hit in result["results"]]}
        if "relations" in result:
            found["relations"] = result["relations"]
        return found

    @server.tool(title="Get a memory", annotations=_READ)
    @_model_readable
    async def get_memory(memory_id: MemoryId, ctx: Context) -> dict[str, Any]:
        """One memory by id, with its dates and metadata."""
        return _brief(await visible(ctx, memory_id))

    @server.tool(title="List memories", annotations=_READ)
    @_model_readable
    async def list_memories(
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=200, description="Page size.")] = 50,
        cursor: Annotated[
            str | None, Field(description="next_cursor from the previous page.")
        ] = None,
    ) -> dict[str, Any]:
        """Every current memory, one page at a time (use search_memories to find one)."""
        page = await service.get_all(top_k=limit, cursor=cursor, **resolve(ctx))
        return {
            "results": [_brief(item) for item in page["results"]],
            "next_cursor": page["next_cursor"],
        }

    @server.tool(
        title="Correct a memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True,
            open_world_hint=False,
        ),
    )  # fmt: skip
    @_model_readable
    async def update_memory(
        memory_id: MemoryId,
        text: Annotated[str, Field(description="The corrected text.")],
        ctx: Context,
    ) -> dict[str, Any]:
        """Rewrite a memory's text (the old text stays in its history). For a fact that
        changed, use add_memory instead: it keeps the old fact as superseded."""
        await visible(ctx, memory_id)
        return _brief(await service.update(memory_id, text=text, **resolve(ctx)))

    @server.tool(
        title="Forget a memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True,
            open_world_hint=False,
        ),
    )  # fmt: skip
    @_model_readable
    async def delete_memory(memory_id: MemoryId, ctx: Context) -> dict[str, Any]:
        """Delete a memory the user asked to forget (recorded in its history)."""
        await visible(ctx, memory_id)
        return await service.delete(memory_id, **resolve(ctx))

    @server.tool(title="Memory history", annotations=_READ)
    @_model_readable
    async def memory_history(memory_id: MemoryId, ctx: Context) -> dict[str, Any]:
        """How a memory changed: its events oldest first (ADD, UPDATE, SUPERSEDE, DELETE)
        and, when a newer fact superseded it, the chain of successors up to the current
        one."""
        item = await visible(ctx, memory_id)
        events = await service.history(memory_id, **resolve(ctx))
        chain: list[dict[str, Any]] = []
        successor = item.get("superseded_by")
        seen = {memory_id}
        while successor and successor not in seen and len(chain) < _HISTORY_CHAIN_LIMIT:
            seen.add(successor)
            nxt = await service.get(successor, **resolve(ctx))
            if nxt is None:
                break
            chain.append(_brief(nxt))
            successor = nxt.get("superseded_by")
        return {
            "memory": _brief(item),
            "events": [
                {k: e[k] for k in ("event", "old_memory", "new_memory", "created_at",
                                   "superseded_by") if e.get(k) is not None}
                for e in events
            ],
            "superseded_by_chain": chain,
        }  # fmt: skip

    return server
