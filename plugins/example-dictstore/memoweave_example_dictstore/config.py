"""``DictStoreConfig``: the ``config`` section of vector_store ``dictstore``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class DictStoreConfig(BaseModel):
    """``config`` of vector_store ``dictstore`` (unknown keys are rejected)."""

    # defer_build: the schema is built on first validation, not when the plugin registers
    model_config = ConfigDict(extra="forbid", defer_build=True)

    max_records: int | None = Field(
        default=None, ge=1, description="Refuse upserts that would grow a collection past this."
    )


__all__ = ["DictStoreConfig"]
