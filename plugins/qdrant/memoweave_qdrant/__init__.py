"""memoweave plugin: the ``qdrant`` vector store (Qdrant Edge, qdrant-client local, server).

Registration imports no vendor SDK and does no I/O; the engines are imported when a store
is created.
"""

from __future__ import annotations

from memoweave.hookspecs import Register, hookimpl
from memoweave.providers.vector_store import VectorStore
from memoweave_qdrant.config import QdrantStoreConfig

__all__ = ["QdrantStoreConfig", "create_store", "register_vector_stores"]


def create_store(config: QdrantStoreConfig) -> VectorStore:
    """Build a :class:`memoweave_qdrant.store.QdrantVectorStore` from a validated config."""
    from memoweave_qdrant.store import QdrantVectorStore

    return QdrantVectorStore(config)


@hookimpl
def register_vector_stores(register: Register) -> None:
    """Register the ``qdrant`` vector store."""
    register(
        "qdrant",
        create_store,
        config_model=QdrantStoreConfig,
        description="Qdrant: embedded Qdrant Edge (default), qdrant-client local mode, or a server",
    )
