"""The servers' one door to the memory: the core's ``AsyncMemory``, awaited.

Every REST route and MCP tool calls memory through :class:`MemoryService`, so which
memory object sits behind the servers is decided here only. ``AsyncMemory`` belongs to
one event loop: the servers create the service before their loop starts, use it only on
that loop and ``await close()`` on it when they stop.
"""

from __future__ import annotations

from typing import Any

from memoweave.config import MemoryConfig
from memoweave.memory import AsyncMemory


class MemoryService:
    """Awaitable ``add``/``search``/``get``/... with ``Memory``'s arguments, results and
    errors."""

    def __init__(self, memory: AsyncMemory) -> None:
        self._memory = memory

    @classmethod
    def from_config(cls, config: Any, **overrides: Any) -> MemoryService:
        """A service over a new ``AsyncMemory(config, **overrides)`` (a ``MemoryConfig``,
        a dict, a YAML path or ``None``)."""
        return cls(AsyncMemory(config, **overrides))

    @property
    def config(self) -> MemoryConfig:
        return self._memory.config

    async def add(self, messages: Any, **kwargs: Any) -> dict[str, Any]:
        return await self._memory.add(messages, **kwargs)

    async def search(self, query: str, **kwargs: Any) -> dict[str, Any]:
        return await self._memory.search(query, **kwargs)

    async def get(self, memory_id: str, **kwargs: Any) -> dict[str, Any] | None:
        return await self._memory.get(memory_id, **kwargs)

    async def get_all(self, **kwargs: Any) -> dict[str, Any]:
        return await self._memory.get_all(**kwargs)

    async def update(self, memory_id: str, **kwargs: Any) -> dict[str, Any]:
        return await self._memory.update(memory_id, **kwargs)

    async def delete(self, memory_id: str, **kwargs: Any) -> dict[str, str]:
        return await self._memory.delete(memory_id, **kwargs)

    async def delete_all(self, **kwargs: Any) -> dict[str, str]:
        return await self._memory.delete_all(**kwargs)

    async def history(self, memory_id: str, **scope: Any) -> list[dict[str, Any]]:
        return await self._memory.history(memory_id, **scope)

    async def reset(self) -> None:
        await self._memory.reset()

    async def close(self) -> None:
        await self._memory.close()
