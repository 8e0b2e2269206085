"""``UpstashVectorStore``: the memoweave vector store contract on Upstash Vector (REST).

A memoweave collection is the Upstash namespace ``namespace_prefix + name`` of one index;
the index fixes dimensions and metric, so ``ensure_collection`` checks them against
``info()`` instead of creating anything (namespaces appear on first write). Every SDK call
goes through :meth:`UpstashVectorStore._step`, which maps failures to ``VectorStoreError``.
Search and filtering are in :mod:`memoweave_upstash.search`; see the README for the
filter translation and the score conversion.

Every method is written once, as a pipeline of SDK calls (:mod:`memoweave.runtime.steps`):
the sync methods run it on ``upstash_vector.Index``, the async twins (``asearch``...)
await it on ``AsyncIndex`` (:class:`memoweave_upstash.client.UpstashClient`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from memoweave.errors import NotFound, VectorStoreError
from memoweave.filters import FilterNode, compile_filter, parse_filter
from memoweave.providers.checks import check_positive
from memoweave.providers.store_checks import (
    check_collection_name,
    check_dims,
    check_id,
    check_ids,
    check_metric,
    check_payload,
    check_query,
    check_records,
    check_vector,
    closed,
    not_bound,
)
from memoweave.providers.vector_store import (
    EmbedText,
    Metric,
    Page,
    Payload,
    SearchHit,
    StoreCapabilities,
    StoredRecord,
    VectorRecord,
    VectorStore,
)
from memoweave.runtime.aio import awaitable
from memoweave.runtime.steps import Steps, blocking, call
from memoweave_upstash import client, search
from memoweave_upstash.config import NAMESPACE_RE, UpstashStoreConfig
from memoweave_upstash.filters import translate
from memoweave_upstash.payloads import SIMILARITY_FUNCTIONS, decode_metadata, encode_payload

T = TypeVar("T")


def _chunks(items: list[T], size: int) -> list[list[T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


class UpstashVectorStore(VectorStore):
    """Vectors in one namespace of an Upstash Vector index (see the module docstring)."""

    capabilities = StoreCapabilities(keyword_search=False, persistent=True)

    def __init__(self, config: UpstashStoreConfig) -> None:
        self.config = config
        self.capabilities = StoreCapabilities(
            keyword_search=False, persistent=True, embeds_text=config.embeddings == "server"
        )
        self._url, _ = config.resolved()
        self._client = client.UpstashClient(config)
        self._namespace: str | None = None
        self._dims = 0
        self._metric: Metric = "cosine"
        self._closed = False

    # -- plumbing --------------------------------------------------------------------------

    def _step(self, op: str, method: str, *args: Any, **kwargs: Any) -> Steps[Any]:
        """The pipeline of one SDK call (``Index.<method>``), every failure mapped to
        ``VectorStoreError``."""
        return self._mapped(op, call(self._client.index, method, *args, **kwargs))

    def _handle_step(self, op: str, handle: Any, method: str, *args: Any) -> Steps[Any]:
        """The pipeline of one call of a resumable query handle."""
        return self._mapped(op, call(self._client.handle, handle, method, *args))

    def _mapped(self, op: str, step: Any) -> Steps[Any]:
        try:
            return (yield step)
        except VectorStoreError:
            raise
        except Exception as exc:
            raise client.store_error(exc, op, self._url, self._namespace or "") from exc

    def _bound(self) -> str:
        if self._closed:
            raise closed("Upstash")
        if self._namespace is None:
            raise not_bound("Upstash")
        return self._namespace

    @property
    def namespace(self) -> str | None:
        """The Upstash namespace of the bound collection (``None`` before binding)."""
        return self._namespace

    # -- collection ------------------------------------------------------------------------

    def _ensure_collection(self, name: str, dims: int, metric: Metric = "cosine") -> Steps[None]:
        """Bind to namespace ``prefix + name`` after checking ``dims``/``metric`` on the index."""
        check_collection_name(
            name, NAMESPACE_RE, "Use letters, digits, '_' and '-' only (it becomes a namespace)."
        )
        dims = check_dims(dims)
        check_metric(metric)
        if self._closed:
            raise closed("Upstash")
        info = yield from self._step("info", "info")
        if self.capabilities.embeds_text and not _embedding_model(info):
            raise VectorStoreError(
                f"Upstash index at {self._url} has no embedding model, but the store is "
                "configured with embeddings: server",
                hint="Create the index with an embedding model, or set embeddings: client "
                "and configure an embedder.",
            )
        wanted = SIMILARITY_FUNCTIONS[metric]
        if info.dimension != dims or info.similarity_function != wanted:
            raise VectorStoreError(
                f"Upstash index at {self._url} has dimension {info.dimension} and similarity "
                f"{info.similarity_function}; collection {name!r} asked for {dims} and {wanted}",
                hint="Upstash fixes dims and metric per index: point the store at a matching "
                "index or change the embedder / metric.",
                details={"index_dims": info.dimension, "index_metric": info.similarity_function},
            )
        self._namespace = self.config.namespace_prefix + name
        self._dims, self._metric = dims, metric

    def _describe_collection(self, name: str) -> Steps[tuple[int, Metric] | None]:
        """The index's ``(dims, metric)`` if namespace ``prefix + name`` holds vectors,
        else ``None`` (namespaces appear on first write)."""
        if self._closed:
            raise VectorStoreError("the Upstash store is closed", hint="Create a new store.")
        info = yield from self._step("info", "info")
        if (self.config.namespace_prefix + name) not in info.namespaces:
            return None
        reverse: dict[str, Metric] = {v: k for k, v in SIMILARITY_FUNCTIONS.items()}
        return int(info.dimension), reverse.get(info.similarity_function, "cosine")

    def _text_dims(self) -> Steps[int]:
        """The index dimension (the length of the vectors its embedding model makes)."""
        if self._closed:
            raise VectorStoreError("the Upstash store is closed", hint="Create a new store.")
        return int((yield from self._step("info", "info")).dimension)

    def _drop_collection(self) -> Steps[None]:
        """Remove every vector of the bound namespace (Upstash ``reset``)."""
        namespace = self._bound()
        yield from self._step("reset", "reset", namespace=namespace)

    # -- writes ----------------------------------------------------------------------------

    def _upsert(self, records: Sequence[VectorRecord]) -> Steps[None]:
        """Insert or replace ``records``, ``upsert_batch_size`` vectors per request.

        Every record is validated before the first request, so bad input writes nothing.
        """
        namespace = self._bound()
        vectors: list[dict[str, Any]] = []
        texts: list[dict[str, Any]] = []  # embedded by the index (embeddings: server)
        embeds = self.capabilities.embeds_text
        for rec in check_records(records, self._dims, embeds_text=embeds):
            item = {"id": rec.id, "metadata": encode_payload(rec.payload)}
            if isinstance(rec.vector, EmbedText):
                texts.append({**item, "data": rec.vector.text})
            else:
                vectors.append({**item, "vector": rec.vector})
        for chunk in _chunks(vectors, self.config.upsert_batch_size):
            yield from self._step("upsert", "upsert", chunk, namespace=namespace)
        for chunk in _chunks(texts, self.config.upsert_batch_size):
            yield from self._step("upsert", "upsert", chunk, namespace=namespace)

    def _delete(self, ids: Sequence[str]) -> Steps[None]:
        """Delete ``ids``; missing ids are ignored."""
        namespace = self._bound()
        for chunk in _chunks(check_ids(ids), self.config.read_batch_size):
            yield from self._step("delete", "delete", chunk, namespace=namespace)

    def _update(
        self, id: str, *, vector: Sequence[float] | None = None, payload: Payload | None = None
    ) -> Steps[None]:
        """Replace the vector and/or the whole payload of ``id``; ``NotFound`` if missing."""
        from upstash_vector.types import MetadataUpdateMode

        namespace = self._bound()
        check_id(id)
        new_vector = None if vector is None else check_vector(vector, self._dims)
        metadata = None if payload is None else encode_payload(check_payload(payload))
        if new_vector is None and metadata is None:
            if not (yield from self._get([id])):
                raise NotFound(f"no record {id!r} in collection {namespace!r}")
            return
        updated = yield from self._step(
            "update",
            "update",
            id,
            vector=new_vector,
            metadata=metadata,
            namespace=namespace,
            metadata_update_mode=MetadataUpdateMode.OVERWRITE,
        )
        if not updated:
            raise NotFound(f"no record {id!r} in collection {namespace!r}")

    # -- reads -----------------------------------------------------------------------------

    def _get(self, ids: Sequence[str], *, with_vectors: bool = False) -> Steps[list[StoredRecord]]:
        """The existing records among ``ids``, in the order asked."""
        namespace = self._bound()
        wanted = check_ids(ids)
        found: dict[str, StoredRecord] = {}
        for chunk in _chunks(list(dict.fromkeys(wanted)), self.config.read_batch_size):
            results = yield from self._step(
                "fetch",
                "fetch",
                chunk,
                include_vectors=with_vectors,
                include_metadata=True,
                namespace=namespace,
            )
            for item in results:
                if item is not None:
                    vec = list(item.vector) if with_vectors and item.vector is not None else None
                    found[item.id] = StoredRecord(item.id, decode_metadata(item.metadata), vec)
        return [found[i] for i in wanted if i in found]

    def _search(
        self, vector: Sequence[float], *, top_k: int = 10, filter: FilterNode | None = None
    ) -> Steps[list[SearchHit]]:
        """The ``top_k`` most similar records matching ``filter`` (scores per the contract)."""
        return (yield from self._search_many([vector], top_k=top_k, filter=filter))[0]

    def _search_many(
        self,
        vectors: Sequence[Sequence[float]],
        *,
        top_k: int = 10,
        filter: FilterNode | None = None,
    ) -> Steps[list[list[SearchHit]]]:
        """:meth:`search` for several query vectors, batched through the SDK's ``query_many``."""
        namespace = self._bound()
        top_k = check_positive(top_k, "top_k")
        embeds = self.capabilities.embeds_text
        queries = [
            check_query(v, self._dims, f"vectors[{i}]", embeds_text=embeds)
            for i, v in enumerate(vectors)
        ]
        node = parse_filter(filter)
        return (yield from search.run(self, namespace, queries, top_k, node))

    def _list(
        self, *, filter: FilterNode | None = None, limit: int = 100, cursor: str | None = None
    ) -> Steps[Page]:
        """One page of matching records in Upstash's range order (filtered client-side)."""
        namespace = self._bound()
        limit = check_positive(limit, "limit")
        node = parse_filter(filter)
        if translate(node).nothing:
            return Page([], None)
        return (yield from search.list_page(self, namespace, node, limit, cursor))

    def _count(self, *, filter: FilterNode | None = None) -> Steps[int]:
        """Records matching ``filter``: ``info()`` without a filter, a range scan with one."""
        namespace = self._bound()
        node = parse_filter(filter)
        if node is None:
            info = yield from self._step("info", "info")
            ns = info.namespaces.get(namespace)
            return 0 if ns is None else ns.vector_count + ns.pending_vector_count
        if translate(node).nothing:
            return 0
        predicate = compile_filter(node)
        return len((yield from search.scan(self, namespace, predicate)))

    def _close(self) -> Steps[None]:
        """Release the HTTP connections. Idempotent."""
        if not self._closed:
            self._closed = True
            yield call(self._client.close)

    ensure_collection = blocking(_ensure_collection)
    aensure_collection = awaitable(_ensure_collection)
    text_dims = blocking(_text_dims)
    atext_dims = awaitable(_text_dims)
    describe_collection = blocking(_describe_collection)
    drop_collection = blocking(_drop_collection)
    adrop_collection = awaitable(_drop_collection)
    upsert = blocking(_upsert)
    aupsert = awaitable(_upsert)
    delete = blocking(_delete)
    adelete = awaitable(_delete)
    update = blocking(_update)
    aupdate = awaitable(_update)
    get = blocking(_get)
    aget = awaitable(_get)
    search = blocking(_search)
    asearch = awaitable(_search)
    search_many = blocking(_search_many)
    asearch_many = awaitable(_search_many)
    list = blocking(_list)
    alist = awaitable(_list)
    count = blocking(_count)
    acount = awaitable(_count)
    close = blocking(_close)
    aclose = awaitable(_close)


def _embedding_model(info: Any) -> str:
    dense = getattr(info, "dense_index", None)
    return (getattr(dense, "embedding_model", "") or "") if dense is not None else ""


__all__ = ["UpstashVectorStore"]
