"""memoweave: long-term memory for LLM applications.

``AsyncMemory`` is imported on first access (it brings asyncio): a synchronous process,
such as ``memoweave search``, never loads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memoweave.errors import (
    ConfigError,
    ConsistencyError,
    DuplicateProviderError,
    EmbeddingError,
    FilterError,
    HistoryError,
    LLMError,
    MemoweaveError,
    NotFound,
    PluginError,
    ProviderError,
    ProviderNotFound,
    RerankerError,
    ValidationError,
    VectorStoreError,
)
from memoweave.hookspecs import hookimpl
from memoweave.memory import Memory

if TYPE_CHECKING:
    from memoweave.memory.async_api import AsyncMemory

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "AsyncMemory":
        from memoweave.memory.async_api import AsyncMemory

        return AsyncMemory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AsyncMemory",
    "ConfigError",
    "ConsistencyError",
    "DuplicateProviderError",
    "EmbeddingError",
    "FilterError",
    "HistoryError",
    "LLMError",
    "Memory",
    "MemoweaveError",
    "NotFound",
    "PluginError",
    "ProviderError",
    "ProviderNotFound",
    "RerankerError",
    "ValidationError",
    "VectorStoreError",
    "__version__",
    "hookimpl",
]
