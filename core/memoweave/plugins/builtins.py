"""The core's own providers, registered through the same hooks as third-party plugins."""

from __future__ import annotations

from typing import Any

from memoweave.hookspecs import Register, hookimpl
from memoweave.stores.memory_config import InMemoryGraphConfig, InMemoryStoreConfig


def _memory_store(config: InMemoryStoreConfig) -> Any:
    from memoweave.stores.memory import InMemoryVectorStore

    return InMemoryVectorStore(config)


@hookimpl
def register_vector_stores(register: Register) -> None:
    """vector_store ``memory``: exact search in process memory, optionally saved to disk."""
    register(
        "memory",
        _memory_store,
        config_model=InMemoryStoreConfig,
        description="Exact in-process vector store with BM25; optional on-disk persistence.",
    )


def _memory_graph(config: InMemoryGraphConfig) -> Any:
    from memoweave.stores.graph_memory import InMemoryGraphStore

    return InMemoryGraphStore(config)


@hookimpl
def register_graph_stores(register: Register) -> None:
    """graph_store ``memory``: the contract's reference, in process memory."""
    register(
        "memory",
        _memory_graph,
        config_model=InMemoryGraphConfig,
        description="Reference graph store in process memory (not persistent).",
    )
