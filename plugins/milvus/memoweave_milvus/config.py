"""Configuration of the ``milvus`` vector store.

Two modes, chosen by ``uri``:

- **Milvus Lite** (embedded, the default): ``uri`` is a local path ending in ``.db``
  (default ``$MEMOWEAVE_HOME/milvus.db`` or ``~/.memoweave/milvus.db``). Milvus Lite keeps
  the data in that folder and allows one process at a time.
- **Milvus server / cluster / Zilliz Cloud**: ``uri`` is ``http(s)://host:port`` (or
  ``tcp://``/``unix:``), optionally with ``token`` (``"user:password"`` or an API key) and
  ``db_name``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

ConsistencyLevel = Literal["Strong", "Session", "Bounded", "Eventually"]

#: Vector index types Milvus Lite implements (``milvus-lite`` 3.x README).
LITE_INDEX_TYPES: frozenset[str] = frozenset(
    {"FLAT", "BRUTE_FORCE", "AUTOINDEX", "HNSW", "HNSW_SQ", "IVF_FLAT", "IVF_SQ8"}
)
DEFAULT_LITE_INDEX = "FLAT"
DEFAULT_SERVER_INDEX = "HNSW"
DEFAULT_HNSW_PARAMS: dict[str, Any] = {"M": 16, "efConstruction": 200}
_REMOTE_PREFIXES = ("http://", "https://", "tcp://", "unix:")


def memoweave_home() -> Path:
    """The memoweave home folder: ``$MEMOWEAVE_HOME`` or ``~/.memoweave``."""
    env = os.environ.get("MEMOWEAVE_HOME")
    return Path(env).expanduser() if env else Path.home() / ".memoweave"


def default_uri() -> str:
    """``<memoweave home>/milvus.db`` (a Milvus Lite database)."""
    return str(memoweave_home() / "milvus.db")


def is_remote_uri(uri: str) -> bool:
    """Whether ``uri`` points at a Milvus server rather than a Milvus Lite ``.db`` path."""
    return uri.lower().startswith(_REMOTE_PREFIXES)


class MilvusStoreConfig(BaseModel):
    """Validated configuration of the ``milvus`` vector store (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    uri: str = Field(
        default_factory=default_uri,
        description="Local Milvus Lite path ending in .db, or http(s)://host:port of a server.",
    )
    token: SecretStr | None = Field(
        default=None, description='Server only: "user:password" or an API key.'
    )
    db_name: str | None = Field(default=None, description="Milvus database name (default db).")
    index_type: str | None = Field(
        default=None,
        description="Vector index: HNSW on a server, FLAT on Milvus Lite when omitted.",
    )
    index_params: dict[str, Any] | None = Field(
        default=None,
        description='Index build params, e.g. {"M": 16, "efConstruction": 200} for HNSW.',
    )
    search_params: dict[str, Any] | None = Field(
        default=None,
        description='Search params, e.g. {"ef": 128} for HNSW (ef is raised to the limit).',
    )
    consistency_level: ConsistencyLevel = Field(
        default="Strong", description="Read consistency; Strong sees every acknowledged write."
    )
    timeout: float | None = Field(
        default=30.0, gt=0, description="Per-request timeout in seconds (None: no timeout)."
    )
    lite_flush_rows: int = Field(
        default=256,
        ge=1,
        description="Milvus Lite: flush writes into an indexed segment after this many rows "
        "(Lite scans unflushed rows in Python on every read).",
    )
    keyword_search: bool = Field(
        default=True,
        description="Create the BM25 full-text field (needs Milvus 2.5+ or Milvus Lite 3.x).",
    )
    analyzer_params: dict[str, Any] | None = Field(
        default=None,
        description='Analyzer of the BM25 text field, e.g. {"type": "chinese"} (default standard).',
    )

    @field_validator("uri")
    @classmethod
    def _check_uri(cls, value: str) -> str:
        value = value.strip()
        if is_remote_uri(value):
            return value
        if not value.endswith(".db"):
            raise ValueError(
                "uri must be a Milvus Lite path ending in .db or a server URL "
                "(http://host:19530, https://...)"
            )
        return str(Path(value).expanduser())

    @field_validator("index_type")
    @classmethod
    def _upper_index(cls, value: str | None) -> str | None:
        return value.strip().upper() if value else None

    @model_validator(mode="after")
    def _check_mode(self) -> MilvusStoreConfig:
        if self.is_lite:
            if self.token is not None:
                raise ValueError("token is only used with a Milvus server uri (http/https)")
            if self.index_type and self.index_type not in LITE_INDEX_TYPES:
                raise ValueError(
                    f"Milvus Lite does not support index_type {self.index_type!r}; "
                    f"use one of {', '.join(sorted(LITE_INDEX_TYPES))}"
                )
        return self

    @property
    def is_lite(self) -> bool:
        """Whether this configuration uses embedded Milvus Lite."""
        return not is_remote_uri(self.uri)

    @property
    def effective_index_type(self) -> str:
        """The vector index type to create (the configured one or the mode's default)."""
        if self.index_type:
            return self.index_type
        return DEFAULT_LITE_INDEX if self.is_lite else DEFAULT_SERVER_INDEX

    @property
    def effective_index_params(self) -> dict[str, Any]:
        """Index build params (HNSW gets ``M=16, efConstruction=200`` by default)."""
        if self.index_params is not None:
            return dict(self.index_params)
        return dict(DEFAULT_HNSW_PARAMS) if self.effective_index_type == "HNSW" else {}
