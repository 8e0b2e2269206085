"""memoweave graph store plugin: LadybugDB embedded (provider name ``ladybug``).

Registration imports nothing from LadybugDB and does no I/O; the engine is imported and
the database opened by the factory, when a user asks for ``graph_store: ladybug``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memoweave import hookimpl

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


class LadybugConfig(BaseModel):
    """``config`` of graph_store ``ladybug``."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(
        default=None,
        description="Database file (created on demand, parent directories too); "
        "None: an in-memory database, lost on close.",
    )
    buffer_pool_mb: int = Field(
        default=128,
        ge=16,
        le=65536,
        description="Page cache size in MiB (the engine's own default is 80% of RAM).",
    )
    max_threads: int = Field(default=1, ge=1, le=64, description="Query threads.")
    read_only: bool = Field(default=False, description="Open an existing database read-only.")


def create_store(config: LadybugConfig) -> Any:
    from memoweave_ladybug.store import LadybugGraphStore  # the engine is imported on use

    return LadybugGraphStore(config)


@hookimpl
def register_graph_stores(register: Any) -> None:
    register(
        "ladybug",
        create_store,
        config_model=LadybugConfig,
        description="Embedded graph store on LadybugDB (Kuzu fork): one file, Cypher, no server.",
    )


__all__ = ["LadybugConfig", "create_store", "register_graph_stores"]
