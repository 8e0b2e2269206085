"""Reading a mem0 Qdrant collection (``memoweave import --from-mem0``), read-only.

mem0 opens Qdrant like this: ``url`` / ``host`` + ``port`` / ``api_key`` mean a server,
anything else the qdrant-client local folder ``path`` (default ``/tmp/qdrant``). Its points
carry the flat mem0 payload and a dense vector, unnamed or under the name ``""`` (mem0 2.x
adds a sparse ``bm25`` vector, which is ignored).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from memoweave.errors import ConfigError, VectorStoreError
from memoweave.transfer.mem0 import Mem0Point


class QdrantMem0Source:
    """The points of one mem0 collection, paged with ``scroll``."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        from qdrant_client import QdrantClient

        if config.get("client") is not None:
            raise ConfigError(
                "vector_store.config.client is a live client object",
                hint="Give mem0's url (and api_key), host and port, or path instead.",
            )
        self.collection = str(config.get("collection_name") or "mem0")
        params: dict[str, Any] = {}
        for key in ("url", "api_key", "https"):
            if config.get(key) is not None:
                params[key] = config[key]
        if config.get("host") and config.get("port"):
            params.update(host=config["host"], port=config["port"])
        self.where = str(
            params.get("url") or params.get("host") or config.get("path") or "/tmp/qdrant"
        )
        if not params:
            params["path"] = config.get("path") or "/tmp/qdrant"
        try:
            self._client = QdrantClient(**params)
            exists = self._client.collection_exists(self.collection)
        except Exception as exc:
            raise VectorStoreError(f"cannot open mem0's Qdrant at {self.where}: {exc}") from exc
        if not exists:
            self._client.close()
            raise VectorStoreError(
                f"mem0's Qdrant at {self.where} has no collection {self.collection!r}",
                hint="Check vector_store.config.collection_name and path/url in the mem0 config.",
            )

    def points(self, page_size: int) -> Iterator[list[Mem0Point]]:
        offset = None
        while True:
            try:
                rows, offset = self._client.scroll(
                    self.collection,
                    limit=page_size,
                    offset=offset,
                    with_payload=True,
                    with_vectors=True,
                )
            except Exception as exc:
                raise VectorStoreError(f"reading mem0's Qdrant at {self.where}: {exc}") from exc
            yield [Mem0Point(str(r.id), dict(r.payload or {}), _dense(r.vector)) for r in rows]
            if offset is None:
                return

    def close(self) -> None:
        self._client.close()


def _dense(vector: Any) -> list[float] | None:
    """The dense vector of a point: the unnamed one, or the one named ``""``."""
    if isinstance(vector, Mapping):
        vector = vector.get("")
    if vector is None or not isinstance(vector, (list, tuple)):
        return None
    return [float(x) for x in vector]
