"""memoweave: long-term memory for LLM applications."""

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
from memoweave.memory import AsyncMemory, Memory

__version__ = "0.1.0"

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
