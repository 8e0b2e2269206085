"""Provider contracts: the four small interfaces every plugin implements."""

from memoweave.providers.embedder import Embedder, Purpose
from memoweave.providers.llm import LLM, LLMCapabilities, LLMResponse, Message, ToolCall, Usage
from memoweave.providers.reranker import RankedDocument, Reranker
from memoweave.providers.vector_store import (
    Metric,
    Page,
    SearchHit,
    StoreCapabilities,
    StoredRecord,
    VectorRecord,
    VectorStore,
)

__all__ = [
    "LLM",
    "Embedder",
    "LLMCapabilities",
    "LLMResponse",
    "Message",
    "Metric",
    "Page",
    "Purpose",
    "RankedDocument",
    "Reranker",
    "SearchHit",
    "StoreCapabilities",
    "StoredRecord",
    "ToolCall",
    "Usage",
    "VectorRecord",
    "VectorStore",
]
