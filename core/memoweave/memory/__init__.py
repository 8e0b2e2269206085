"""The ``Memory`` API and its write pipeline."""

from memoweave.memory.api import Memory
from memoweave.memory.async_api import AsyncMemory

__all__ = ["AsyncMemory", "Memory"]
