"""The ``Memory`` API and its write pipeline (``AsyncMemory`` is imported on first access:
it brings asyncio, which a synchronous process never loads)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memoweave.memory.api import Memory

if TYPE_CHECKING:
    from memoweave.memory.async_api import AsyncMemory

__all__ = ["AsyncMemory", "Memory"]


def __getattr__(name: str) -> Any:
    if name == "AsyncMemory":
        from memoweave.memory.async_api import AsyncMemory

        return AsyncMemory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
