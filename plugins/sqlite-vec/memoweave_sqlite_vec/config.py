"""Configuration of the ``sqlite-vec`` vector store."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memoweave.memory.defaults import memoweave_home


def default_path() -> str:
    """``<memoweave home>/vectors.db``."""
    return str(memoweave_home() / "vectors.db")


class SqliteVecStoreConfig(BaseModel):
    """Where the database lives and how long a writer waits for another one."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    path: str = Field(
        default_factory=default_path,
        min_length=1,
        description='SQLite file (created on demand), or ":memory:" for a private database.',
    )
    busy_timeout_ms: int = Field(
        default=10_000,
        ge=0,
        le=600_000,
        description="How long a write waits for another process's write before failing.",
    )
    synchronous: Literal["NORMAL", "FULL"] = Field(
        default="NORMAL",
        description="SQLite synchronous mode: NORMAL (WAL, survives process crashes) or FULL "
        "(also survives power loss).",
    )
