"""Reading a mem0 Upstash namespace (``memoweave import --from-mem0``), read-only.

mem0 keeps its collection in the namespace ``collection_name`` (default ``mem0``) of the
index at ``url`` / ``token`` (default ``$UPSTASH_VECTOR_REST_URL`` / ``_TOKEN``); the
vector's metadata is mem0's flat payload.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from memoweave.errors import ConfigError, VectorStoreError
from memoweave.transfer.mem0 import Mem0Point
from memoweave_upstash.config import TOKEN_ENV, URL_ENV


class UpstashMem0Source:
    """The vectors of one mem0 namespace, paged with ``range``."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        from upstash_vector import Index

        if config.get("client") is not None:
            raise ConfigError(
                "vector_store.config.client is a live client object",
                hint="Give mem0's url and token (or the UPSTASH_VECTOR_REST_* variables).",
            )
        url = config.get("url") or os.environ.get(URL_ENV)
        token = config.get("token") or os.environ.get(TOKEN_ENV)
        if not url or not token:
            raise ConfigError(
                "mem0's upstash_vector store needs url and token",
                hint=f"Set them in the mem0 config or in {URL_ENV} / {TOKEN_ENV}.",
            )
        self.namespace = str(config.get("collection_name") or "mem0")
        self.url = str(url)
        self._index = Index(url=self.url, token=str(token))

    def points(self, page_size: int) -> Iterator[list[Mem0Point]]:
        cursor = ""
        while True:
            try:
                result = self._index.range(
                    cursor=cursor,
                    limit=page_size,
                    include_vectors=True,
                    include_metadata=True,
                    namespace=self.namespace,
                )
            except Exception as exc:
                raise VectorStoreError(f"reading mem0's Upstash index {self.url}: {exc}") from exc
            yield [
                Mem0Point(
                    str(v.id),
                    dict(v.metadata or {}),
                    [float(x) for x in v.vector] if v.vector is not None else None,
                )
                for v in result.vectors
            ]
            if not result.next_cursor:
                return
            cursor = result.next_cursor

    def close(self) -> None:
        from memoweave_upstash import client

        client.close(self._index)
