"""Configuration of the built-in in-memory vector store (kept apart so that registering the
``memory`` provider imports no store code)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class InMemoryStoreConfig(BaseModel):
    """``config`` of vector_store ``memory``."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(
        default=None,
        description="Directory where each collection is saved as <path>/<name>.json; "
        "None keeps records in process memory only.",
    )
