"""Provider contracts: the five small interfaces every plugin implements."""

from memoweave.providers.embedder import Embedder, Purpose
from memoweave.providers.graph_store import (
    GraphEntity,
    GraphHit,
    GraphRelation,
    GraphStore,
    GraphStoreCapabilities,
)
from memoweave.providers.llm import (
    LLM,
    LLMCapabilities,
    LLMResponse,
    Message,
    ResponseSchema,
    ToolCall,
    Usage,
)
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
    "GraphEntity",
    "GraphHit",
    "GraphRelation",
    "GraphStore",
    "GraphStoreCapabilities",
    "LLMCapabilities",
    "LLMResponse",
    "Message",
    "Metric",
    "Page",
    "Purpose",
    "RankedDocument",
    "Reranker",
    "ResponseSchema",
    "SearchHit",
    "StoreCapabilities",
    "StoredRecord",
    "ToolCall",
    "Usage",
    "VectorRecord",
    "VectorStore",
]
