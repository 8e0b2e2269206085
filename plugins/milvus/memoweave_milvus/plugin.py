"""memoweave plugin: the ``milvus`` vector store (embedded Milvus Lite or a Milvus server).

Registration imports no vendor SDK and does no I/O; pymilvus (and Milvus Lite) are
imported when a store is created.
"""

from __future__ import annotations

from typing import Any

from memoweave.hookspecs import Register, hookimpl
from memoweave.providers.vector_store import VectorStore
from memoweave_milvus.config import MilvusStoreConfig

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


def create_store(config: MilvusStoreConfig) -> VectorStore:
    """Build a :class:`memoweave_milvus.store.MilvusVectorStore` from a validated config."""
    from memoweave_milvus.store import MilvusVectorStore

    return MilvusVectorStore(config)


@hookimpl
def register_vector_stores(register: Register) -> None:
    """Register the ``milvus`` vector store."""
    register(
        "milvus",
        create_store,
        config_model=MilvusStoreConfig,
        description="Milvus: embedded Milvus Lite (.db path, default) or a Milvus server/cluster",
    )


@hookimpl
def register_mem0_sources(register: Register) -> None:
    """Read mem0's ``milvus`` vector store for ``memoweave import --from-mem0``."""

    def open_source(config: dict[str, Any]) -> Any:
        from memoweave_milvus.mem0_source import MilvusMem0Source

        return MilvusMem0Source(config)

    register("milvus", open_source)
