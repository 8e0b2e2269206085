"""The servers' one door to the memory: awaitable versions of the ``Memory`` methods.

Every REST route and MCP tool calls memory through :class:`MemoryService`, so which
memory object sits behind it is decided here only. Today it is the core's ``Memory`` run
in worker threads (its methods are thread-safe); when the core's ``AsyncMemory`` lands,
this module awaits it directly and nothing else changes.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio.to_thread

from memoweave.config import MemoryConfig
from memoweave.memory import Memory


class MemoryService:
    """Awaitable ``add``/``search``/``get``/... with ``Memory``'s arguments, results and
    errors."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    @classmethod
    def from_config(cls, config: Any, **overrides: Any) -> MemoryService:
        """A service over a new ``Memory(config, **overrides)`` (a ``MemoryConfig``, a dict,
        a YAML path or ``None``)."""
        return cls(Memory(config, **overrides))

    @property
    def config(self) -> MemoryConfig:
        return self._memory.config

    async def _run(self, method: str, /, *args: Any, **kwargs: Any) -> Any:
        call = functools.partial(getattr(self._memory, method), *args, **kwargs)
        return await anyio.to_thread.run_sync(call)

    async def add(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        return await self._run("add", messages, **kwargs)

    async def search(self, query: str, **kwargs: Any) -> dict[str, Any]:
        return await self._run("search", query, **kwargs)

    async def get(self, memory_id: str, **kwargs: Any) -> dict[str, Any] | None:
        return await self._run("get", memory_id, **kwargs)

    async def get_all(self, **kwargs: Any) -> dict[str, Any]:
        return await self._run("get_all", **kwargs)

    async def update(self, memory_id: str, **kwargs: Any) -> dict[str, Any]:
        return await self._run("update", memory_id, **kwargs)

    async def delete(self, memory_id: str, **kwargs: Any) -> dict[str, str]:
        return await self._run("delete", memory_id, **kwargs)

    async def delete_all(self, **kwargs: Any) -> dict[str, str]:
        return await self._run("delete_all", **kwargs)

    async def history(self, memory_id: str) -> list[dict[str, Any]]:
        return await self._run("history", memory_id)

    async def reset(self) -> None:
        await self._run("reset")

    async def close(self) -> None:
        await self._run("close")
