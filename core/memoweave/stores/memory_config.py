"""Configuration of the built-in in-memory vector and graph stores (kept apart so that
registering the ``memory`` providers imports no store code)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class InMemoryStoreConfig(BaseModel):
    """``config`` of vector_store ``memory``."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str | None = Field(
        default=None,
        description="Directory where each collection is saved as <path>/<name>.json; "
        "None keeps records in process memory only.",
    )


class InMemoryGraphConfig(BaseModel):
    """``config`` of graph_store ``memory`` (no settings)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
