"""``LadybugConfig``: the ``config`` section of graph_store ``ladybug``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LadybugConfig(BaseModel):
    """``config`` of graph_store ``ladybug``."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

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


__all__ = ["LadybugConfig"]
