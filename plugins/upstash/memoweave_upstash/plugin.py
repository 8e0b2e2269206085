"""memoweave-upstash: the ``upstash`` vector store (Upstash Vector over REST).

Importing this module registers nothing by itself and imports no vendor SDK: memoweave's
plugin host calls :func:`register_vector_stores`, and the ``upstash-vector`` SDK is
imported only when a store is created. An offline emulator of the service lives in
:mod:`memoweave_upstash.emulator`.
"""

from __future__ import annotations

from typing import Any

from memoweave.hookspecs import Register, hookimpl
from memoweave_upstash.config import UpstashStoreConfig

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


def create_store(config: UpstashStoreConfig) -> Any:
    """Build an :class:`~memoweave_upstash.store.UpstashVectorStore` (the registry's factory)."""
    from memoweave_upstash.store import UpstashVectorStore

    return UpstashVectorStore(config)


@hookimpl
def register_vector_stores(register: Register) -> None:
    """Register the ``upstash`` vector store."""
    register(
        "upstash",
        create_store,
        config_model=UpstashStoreConfig,
        description="Upstash Vector (serverless, REST via the upstash-vector SDK); "
        "a collection is a namespace",
    )


@hookimpl
def register_mem0_sources(register: Register) -> None:
    """Read mem0's ``upstash_vector`` store for ``memoweave import --from-mem0``."""

    def open_source(config: dict[str, Any]) -> Any:
        from memoweave_upstash.mem0_source import UpstashMem0Source

        return UpstashMem0Source(config)

    register("upstash_vector", open_source)
