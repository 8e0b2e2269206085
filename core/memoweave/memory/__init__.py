"""The ``Memory`` API and its write pipeline."""

from memoweave.memory.api import Memory

__all__ = ["Memory"]
