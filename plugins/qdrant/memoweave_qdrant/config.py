"""Configuration of the Qdrant vector store: exactly one of three modes.

- ``edge``: the in-process Qdrant Edge engine (``qdrant-edge-py``), one folder per
  collection under ``path`` (default ``$MEMOWEAVE_HOME/qdrant-edge`` or
  ``~/.memoweave/qdrant-edge``); ``index_threshold_kb`` is the size of a segment's vectors
  past which it gets an HNSW index (:mod:`memoweave_qdrant.edge_index`), and
  ``vector_datatype`` how a new collection stores its original vectors (float16 by
  default; a collection keeps the datatype it was created with) and ``partitions`` into
  how many shards a new collection is split by user_id (:mod:`memoweave_qdrant.edge_engine`).
- ``local``: ``qdrant-client``'s local mode, on disk with ``path`` or in memory with
  ``location=":memory:"``.
- ``server``: a Qdrant server or cluster at ``url`` (optionally with ``api_key``).

When ``mode`` is omitted it is inferred: ``url``/``api_key`` mean server, ``location``
means local, anything else (a bare ``path`` or nothing) means edge, the embedded default.
qdrant-client's local mode on a folder must be asked for with ``mode: local``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

Mode = Literal["edge", "local", "server"]
DEFAULT_INDEX_THRESHOLD_KB = 10_000
"""Qdrant's default indexing threshold: ~6,500 vectors of 384 float32 dimensions."""
DEFAULT_PARTITIONS = 16
"""Shards a new Qdrant Edge collection is split into by user_id (bench/README.md, session 10)."""

_MODE_FIELDS: dict[str, set[str]] = {
    "edge": {"path", "index_threshold_kb", "vector_datatype", "partitions"},
    "local": {"path", "location"},
    "server": {"url", "api_key", "timeout", "prefer_grpc"},
}


def memoweave_home() -> Path:
    """The memoweave home folder: ``$MEMOWEAVE_HOME`` or ``~/.memoweave``."""
    env = os.environ.get("MEMOWEAVE_HOME")
    return Path(env).expanduser() if env else Path.home() / ".memoweave"


class QdrantStoreConfig(BaseModel):
    """Validated configuration of the ``qdrant`` vector store (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    mode: Mode | None = Field(
        default=None, description="edge | local | server; inferred from the other fields."
    )
    path: str | None = Field(default=None, description="Folder (edge, local on disk).")
    location: Literal[":memory:"] | None = Field(
        default=None, description='":memory:" for an in-memory local client.'
    )
    url: str | None = Field(default=None, description="Qdrant server URL (server mode).")
    api_key: SecretStr | None = Field(
        default=None, description="API key (server mode); never shown in reprs or errors."
    )
    timeout: float | None = Field(default=None, gt=0, description="Request timeout, seconds.")
    prefer_grpc: bool = Field(default=False, description="Use gRPC to talk to the server.")
    text_index: bool = Field(
        default=False,
        description="Keep a BM25 text index of the memory text, for "
        "retrieval.keyword_source: store (or auto). Off by default: the core's keyword "
        "index serves keyword_source: core, and an unused text index costs every write.",
    )
    index_threshold_kb: int | None = Field(
        default=None,
        ge=0,
        description="Qdrant Edge: KB of vectors past which a segment gets an HNSW index "
        f"(default {DEFAULT_INDEX_THRESHOLD_KB:,}; 0: never, every search scans exactly).",
    )

    vector_datatype: Literal["float16", "float32"] | None = Field(
        default=None,
        description="Qdrant Edge: how a NEW collection stores its original vectors "
        "(default float16: half the disk and resident pages, scores within ~1e-4 of "
        "float32's). An existing collection keeps the datatype it was created with.",
    )

    partitions: int | None = Field(
        default=None,
        ge=1,
        le=256,
        description="Qdrant Edge: how many shards a NEW collection is split into by "
        f"user_id (default {DEFAULT_PARTITIONS}; 1: one shard), each loaded only when a call "
        "needs it, so a search for one user loads one. An existing collection keeps the "
        "layout it was created with.",
    )

    @field_validator("index_threshold_kb", "partitions", mode="before")
    @classmethod
    def _not_a_bool(cls, value: object) -> object:
        if isinstance(value, bool):  # pydantic would read true as 1
            raise ValueError("must be a number, not a boolean")
        return value

    @model_validator(mode="after")
    def _one_mode(self) -> QdrantStoreConfig:
        mode = self.mode or self._infer_mode()
        given = {
            name
            for name in (
                "path",
                "location",
                "url",
                "api_key",
                "timeout",
                "index_threshold_kb",
                "vector_datatype",
                "partitions",
            )
            if getattr(self, name) is not None
        }
        if self.prefer_grpc:
            given.add("prefer_grpc")
        stray = given - _MODE_FIELDS[mode]
        if stray:
            raise ValueError(
                f"mode {mode!r} does not take {sorted(stray)}; "
                f"it takes {sorted(_MODE_FIELDS[mode])}"
            )
        if mode == "server" and not self.url:
            raise ValueError("mode 'server' needs url (e.g. http://localhost:6333)")
        if mode == "server" and not str(self.url).startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {self.url!r}")
        if mode == "local" and (self.path is None) == (self.location is None):
            raise ValueError("mode 'local' needs exactly one of path or location=':memory:'")
        if mode == "edge" and self.path is not None and not self.path.strip():
            raise ValueError("path must not be empty")
        object.__setattr__(self, "mode", mode)
        return self

    def _infer_mode(self) -> Mode:
        if self.url is not None or self.api_key is not None:
            return "server"
        if self.location is not None:
            return "local"
        return "edge"

    @property
    def resolved_mode(self) -> Mode:
        """The mode after inference (never ``None`` once validated)."""
        assert self.mode is not None
        return self.mode

    def edge_root(self) -> Path:
        """The folder holding one Qdrant Edge shard per collection."""
        return Path(self.path).expanduser() if self.path else memoweave_home() / "qdrant-edge"

    def edge_index_threshold_kb(self) -> int:
        """The indexing threshold of Qdrant Edge segments, in KB of vectors."""
        if self.index_threshold_kb is None:
            return DEFAULT_INDEX_THRESHOLD_KB
        return self.index_threshold_kb

    def edge_vector_datatype(self) -> str:
        """The datatype a new Qdrant Edge collection stores its original vectors in."""
        from memoweave_qdrant.edge_index import DEFAULT_DATATYPE

        return self.vector_datatype or DEFAULT_DATATYPE

    def edge_partitions(self) -> int:
        """How many shards a new Qdrant Edge collection is split into by user_id."""
        return DEFAULT_PARTITIONS if self.partitions is None else self.partitions

    @property
    def persistent(self) -> bool:
        """Whether data survives closing and reopening with this configuration."""
        return self.location is None
