"""Reading a mem0 Milvus collection (``memoweave import --from-mem0``), read-only.

mem0's Milvus collection (``collection_name``, default ``mem0``, at ``url``: a server, or
a Milvus Lite ``.db`` path) has the fields ``id``, ``vectors`` (the dense vector) and
``metadata`` (mem0's flat payload as JSON); mem0 2.x adds ``text`` / ``sparse`` for BM25,
which are ignored. The connection goes through this plugin's client handling (Milvus Lite
server lifetime, lock errors).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from memoweave.errors import VectorStoreError
from memoweave.transfer.mem0 import Mem0Point
from memoweave_milvus.config import MilvusStoreConfig
from memoweave_milvus.connection import close_client, engine_errors, open_client

_FIELDS = ["id", "vectors", "metadata"]


class MilvusMem0Source:
    """The rows of one mem0 collection, paged with a query iterator."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        store_config = MilvusStoreConfig(
            uri=str(config.get("url") or "http://localhost:19530"),
            token=config.get("token") or None,
            db_name=config.get("db_name") or None,
        )
        self.collection = str(config.get("collection_name") or "mem0")
        self.uri = store_config.uri
        self._client, self._lite = open_client(store_config)
        with engine_errors("has_collection", uri=self.uri):
            exists = self._client.has_collection(self.collection)
        if not exists:
            self.close()
            raise VectorStoreError(
                f"mem0's Milvus at {self.uri} has no collection {self.collection!r}",
                hint="Check vector_store.config.collection_name and url in the mem0 config.",
            )

    def points(self, page_size: int) -> Iterator[list[Mem0Point]]:
        with engine_errors("query", uri=self.uri, collection=self.collection):
            self._client.load_collection(self.collection)
            rows = self._client.query_iterator(
                self.collection, batch_size=page_size, filter="", output_fields=_FIELDS
            )
        try:
            while True:
                with engine_errors("query", uri=self.uri, collection=self.collection):
                    page = rows.next()
                if not page:
                    return
                yield [_point(row) for row in page]
        finally:
            rows.close()

    def close(self) -> None:
        close_client(self._client, self._lite)


def _point(row: Mapping[str, Any]) -> Mem0Point:
    vector = row.get("vectors")
    return Mem0Point(
        str(row["id"]),
        dict(row.get("metadata") or {}),
        [float(x) for x in vector] if vector is not None else None,
    )
