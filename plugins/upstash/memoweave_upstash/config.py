"""Configuration of the ``upstash`` vector store (validated by the registry)."""

from __future__ import annotations

import os
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from memoweave.errors import ConfigError

URL_ENV = "UPSTASH_VECTOR_REST_URL"
TOKEN_ENV = "UPSTASH_VECTOR_REST_TOKEN"
NAMESPACE_RE = re.compile(r"[A-Za-z0-9_-]*")
MAX_BATCH = 1000
"""Upstash's documented per-request maximum (vectors per upsert, topK, range limit)."""


class UpstashStoreConfig(BaseModel):
    """Where the Upstash Vector index is and how the store talks to it.

    ``url`` / ``token`` default to the environment variables ``UPSTASH_VECTOR_REST_URL`` /
    ``UPSTASH_VECTOR_REST_TOKEN``, read when the store is created. A memoweave collection is
    the Upstash namespace ``namespace_prefix + name``; dimensions and metric belong to the
    index and are checked against it.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    url: str | None = Field(None, description="REST URL of the index (or $UPSTASH_VECTOR_REST_URL)")
    token: SecretStr | None = Field(
        None, description="REST token of the index (or $UPSTASH_VECTOR_REST_TOKEN)"
    )
    namespace_prefix: str = Field(
        "", description="Prefix added to every collection name to form the Upstash namespace"
    )
    embeddings: Literal["client", "server"] = Field(
        "client",
        description="client: memoweave's embedder makes the vectors; server: the index's own "
        "embedding model embeds the memory text (mem0's enable_embeddings; no embedder runs)",
    )
    timeout: float = Field(30.0, gt=0, description="Seconds to wait for a response")
    connect_timeout: float = Field(10.0, gt=0, description="Seconds to wait for a connection")
    retries: int = Field(1, ge=0, le=10, description="SDK retries on connection errors")
    retry_interval: float = Field(0.5, ge=0, description="Seconds between SDK retries")
    upsert_batch_size: int = Field(
        MAX_BATCH, ge=1, le=MAX_BATCH, description="Vectors per upsert request"
    )
    read_batch_size: int = Field(
        MAX_BATCH, ge=1, le=MAX_BATCH, description="Ids per fetch/delete, vectors per range page"
    )
    query_batch_size: int = Field(
        64, ge=1, le=MAX_BATCH, description="Queries per batched (query_many) request"
    )
    max_top_k: int = Field(
        MAX_BATCH, ge=1, le=MAX_BATCH, description="Largest topK sent in one query request"
    )

    @field_validator("namespace_prefix")
    @classmethod
    def _check_prefix(cls, value: str) -> str:
        if not NAMESPACE_RE.fullmatch(value):
            raise ValueError("namespace_prefix may contain only letters, digits, '_' and '-'")
        return value

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("url must start with http:// or https://")
        return value.rstrip("/") if value else value

    def resolved(self) -> tuple[str, str]:
        """``(url, token)`` from the config, else from the environment; ``ConfigError`` if unset."""
        url = self.url or os.environ.get(URL_ENV, "").rstrip("/")
        token = self.token.get_secret_value() if self.token else os.environ.get(TOKEN_ENV, "")
        if not url:
            raise ConfigError(
                "upstash vector store: no REST URL configured",
                hint=f"Set vector_store.config.url or the {URL_ENV} environment variable.",
                details={"path": "vector_store.config.url"},
            )
        if not url.startswith(("http://", "https://")):
            raise ConfigError(
                f"upstash vector store: {URL_ENV} must start with http:// or https://",
                hint="Copy the REST URL from the Upstash console.",
                details={"path": "vector_store.config.url"},
            )
        if not token:
            raise ConfigError(
                "upstash vector store: no REST token configured",
                hint=f"Set vector_store.config.token or the {TOKEN_ENV} environment variable.",
                details={"path": "vector_store.config.token"},
            )
        return url, token


__all__ = ["MAX_BATCH", "TOKEN_ENV", "URL_ENV", "UpstashStoreConfig"]
