"""memoweave plugin: the ``qdrant`` vector store (Qdrant Edge, qdrant-client local, server).

Registration imports no vendor SDK and does no I/O; the engines are imported when a store
is created.
"""

from __future__ import annotations

from typing import Any

from memoweave.hookspecs import Register, hookimpl
from memoweave.providers.vector_store import VectorStore
from memoweave_qdrant.config import QdrantStoreConfig

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


def create_store(config: QdrantStoreConfig) -> VectorStore:
    """Build the store of ``config``'s mode (:mod:`memoweave_qdrant.store`): Qdrant Edge is
    synchronous; qdrant-client local and server modes also have native async twins."""
    from memoweave_qdrant.store import create_store as create

    return create(config)


@hookimpl
def register_vector_stores(register: Register) -> None:
    """Register the ``qdrant`` vector store."""
    register(
        "qdrant",
        create_store,
        config_model=QdrantStoreConfig,
        description="Qdrant: embedded Qdrant Edge (default), qdrant-client local mode, or a server",
    )


@hookimpl
def register_mem0_sources(register: Register) -> None:
    """Read mem0's ``qdrant`` vector store for ``memoweave import --from-mem0``."""

    def open_source(config: dict[str, Any]) -> Any:
        from memoweave_qdrant.mem0_source import QdrantMem0Source

        return QdrantMem0Source(config)

    register("qdrant", open_source)
