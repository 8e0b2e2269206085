"""The vector store contract.

A store instance is bound to one collection by :meth:`VectorStore.ensure_collection`;
every other method works on that collection and raises ``VectorStoreError`` (code
``vector_store_error``) if called before it (see "Errors" below).

Records
    ``id`` is a canonical lowercase UUID string (the core only ever writes UUIDs, so a store
    may map it to a native UUID type). ``vector`` has exactly ``dims`` floats. ``payload`` is a
    flat JSON-serialisable dict: keys match ``[A-Za-z_][A-Za-z0-9_]*``; values are ``str``
    (of any length: a memory text stored from one long message can be 200,000 characters),
    signed 64-bit ``int``, finite ``float`` (a double), ``bool``, ``None``, lists of those,
    or nested dicts (opaque: nested dicts are stored and returned, never filtered on). Every
    value comes back exactly as written: an int does not pass through a double, a float is
    not narrowed to float32, a string is never cut. The scope keys ``user_id``,
    ``agent_id``, ``run_id`` and ``actor_id`` are ordinary payload keys that the core filters
    on in every call, so stores should index them.

Semantics every implementation must honour (checked by ``memoweave.testing``):

- ``upsert`` is idempotent by id; a second upsert of an id replaces vector *and* payload.
  The caller's records, vectors and payload dicts are never mutated. ``update``, a second
  upsert and ``delete`` reach every copy the store keeps (filterable payload columns or
  indexes, a keyword index): filters and keyword search see only the current payload.
- ``search`` returns at most ``top_k`` hits matching ``filter``, sorted by ``score``
  descending. ``score`` is a similarity, higher is better: for ``metric="cosine"`` it is the
  cosine similarity in [-1, 1]; for ``"dot"`` the dot product; for ``"euclidean"`` minus the
  L2 distance (<= 0). Approximate engines may differ from the exact value by 1e-3.
- ``get`` returns the existing records among ``ids`` in the order asked; missing ids are
  skipped, never an error.
- ``delete`` of a missing id is a no-op.
- ``update`` replaces the vector and/or the whole payload of an existing record; a missing
  id raises :class:`memoweave.errors.NotFound`.
- ``list`` pages through every record matching ``filter`` exactly once, in a stable order,
  ``limit`` at a time; ``next_cursor`` is an opaque string, ``None`` on the last page.
- ``count`` counts records matching ``filter``; ``has_records`` tells whether any does.
- ``filter`` is a parsed :mod:`memoweave.filters` AST (or ``None``); results must agree
  with :func:`memoweave.filters.evaluate`. Translate what the engine supports natively and
  post-filter the rest with the reference evaluator if you must, never silently ignore it.
- ``keyword_search`` exists only when ``capabilities.keyword_search``; it ranks records by
  a keyword relevance score (BM25 or similar) of their ``payload[TEXT_FIELD]`` (the memory
  text, key ``"memory"``), higher is better, and only returns records that share at least
  one term with ``text``.
- ``capabilities.embeds_text`` (server-side embeddings): the store computes vectors from
  text itself. The core then runs no embedder: ``upsert`` and ``search`` receive an
  :class:`EmbedText` (an empty list carrying ``text``) in place of a vector, and
  ``text_dims()`` gives the length of the vectors the store makes. Plain float vectors
  (before-images restored by a rollback) must still be accepted.
- ``close`` is idempotent; a persistent store (``capabilities.persistent``) reopened on the
  same location sees everything written before ``close``.
- Engine failures raise :class:`memoweave.errors.VectorStoreError` with the engine's message.

Errors (each store calls the shared checks of :mod:`memoweave.providers.store_checks`):

- ``ValidationError``: an argument the contract does not allow (records not a list of
  ``VectorRecord``; an id not a non-empty str; ``ids`` not a list; a vector not ``dims``
  finite numbers, a wrong length included; a payload not a dict of the keys and values
  above; ``dims``, ``top_k`` or ``limit`` below 1; an unknown metric or invalid collection
  name; a cursor the store did not hand out; keyword text not a str). It is raised before
  the engine is touched: a batch with one bad record writes none of them.
- ``VectorStoreError``: a method called before ``ensure_collection`` or (any but
  ``close``) after ``close``; ``ensure_collection`` of an existing collection with other
  dims or metric; engine failures.
- ``NotFound``: ``update`` of a missing id.
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from memoweave.filters.ast import FilterNode
from memoweave.runtime.aio import default_async, to_thread

Metric = Literal["cosine", "dot", "euclidean"]
TEXT_FIELD = "memory"
"""The payload key holding the memory text (mem0's name), used by ``keyword_search``."""
SCOPE_KEYS: tuple[str, ...] = ("user_id", "agent_id", "run_id", "actor_id")
"""Payload keys the core filters on in every call; stores should index them."""
STATUS_KEY = "status"
"""Payload key of a memory's lifecycle status (a string: ``"active"``, ``"superseded"``,
``"deleted"``); every read filters on it, so stores should give it a keyword index."""
EXPIRY_KEY = "expires_ts"
"""Payload key of a memory's expiry as a POSIX timestamp (a float, absent if it never
expires); every read filters on it (missing or later than now), so stores should give it a
numeric (float) index."""
HASH_KEY = "hash"
"""Payload key of the md5 of a memory's normalised text; every write looks its new texts
up with a ``hash`` ``in`` filter (duplicate detection), so stores should give it a
keyword index."""
Payload = dict[str, Any]


class EmbedText(list[float]):
    """Stands in for a vector when the store embeds text itself: an empty list whose
    ``text`` the store embeds (only ever passed to stores with ``capabilities.embeds_text``)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def __repr__(self) -> str:
        return f"EmbedText({self.text!r})"


@dataclass(frozen=True)
class VectorRecord:
    """A record to write: id, vector and payload."""

    id: str
    vector: list[float]
    payload: Payload = field(default_factory=dict)


@dataclass(frozen=True)
class StoredRecord:
    """A record read back; ``vector`` is ``None`` unless it was asked for."""

    id: str
    payload: Payload
    vector: list[float] | None = None


@dataclass(frozen=True)
class SearchHit:
    """One search result: the record's id, its similarity ``score`` and its payload."""

    id: str
    score: float
    payload: Payload


@dataclass(frozen=True)
class Page:
    """One page of :meth:`VectorStore.list`."""

    records: list[StoredRecord]
    next_cursor: str | None = None


@dataclass(frozen=True)
class StoreCapabilities:
    """Optional features.

    keyword_search: :meth:`VectorStore.keyword_search` is implemented natively.
    persistent: data survives ``close`` and reopening with the same configuration.
    embeds_text: the store embeds text itself (see :class:`EmbedText`, :meth:`text_dims`).
    """

    keyword_search: bool = False
    persistent: bool = False
    embeds_text: bool = False


class VectorStore(ABC):
    """A collection of vectors with payloads. See the module docstring for the contract."""

    capabilities: StoreCapabilities = StoreCapabilities()

    @abstractmethod
    def ensure_collection(self, name: str, dims: int, metric: Metric = "cosine") -> None:
        """Create the collection if missing, open it otherwise, and bind this store to it.

        Raises ``VectorStoreError`` if it exists with other ``dims`` or ``metric``.
        """

    @abstractmethod
    def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Insert or replace ``records`` (idempotent by id)."""

    @abstractmethod
    def search(
        self, vector: Sequence[float], *, top_k: int = 10, filter: FilterNode | None = None
    ) -> list[SearchHit]:
        """The ``top_k`` records most similar to ``vector`` that match ``filter``."""

    @abstractmethod
    def get(self, ids: Sequence[str], *, with_vectors: bool = False) -> list[StoredRecord]:
        """The existing records among ``ids``, in the order asked."""

    @abstractmethod
    def delete(self, ids: Sequence[str]) -> None:
        """Delete ``ids``; missing ids are ignored."""

    @abstractmethod
    def update(
        self, id: str, *, vector: Sequence[float] | None = None, payload: Payload | None = None
    ) -> None:
        """Replace the vector and/or the whole payload of ``id``; ``NotFound`` if missing."""

    @abstractmethod
    def list(
        self, *, filter: FilterNode | None = None, limit: int = 100, cursor: str | None = None
    ) -> Page:
        """One page of the records matching ``filter``."""

    @abstractmethod
    def count(self, *, filter: FilterNode | None = None) -> int:
        """How many records match ``filter``."""

    @abstractmethod
    def drop_collection(self) -> None:
        """Delete the bound collection and all its records; the store stays bound and the
        collection is recreated empty by the next ``ensure_collection``."""

    def describe_collection(self, name: str) -> tuple[int, Metric] | None:
        """``(dims, metric)`` of collection ``name``, or ``None`` if it does not exist;
        never creates it (``memoweave doctor`` compares it with the embedder). Optional."""
        raise NotImplementedError(f"{type(self).__name__} does not describe collections")

    def text_dims(self) -> int:
        """The length of the vectors the store computes from text; only when
        ``capabilities.embeds_text``."""
        raise NotImplementedError(f"{type(self).__name__} does not embed text")

    def keyword_search(
        self, text: str, *, top_k: int = 10, filter: FilterNode | None = None
    ) -> builtins.list[SearchHit]:
        """Keyword (BM25-like) search; only when ``capabilities.keyword_search``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement keyword_search")

    def has_records(self, *, filter: FilterNode | None = None) -> bool:
        """Whether any record matches ``filter``. The default lists one; a store that
        loads its data in parts may answer from the first part holding one."""
        return bool(self.list(filter=filter, limit=1).records)

    def expect_reads(self, filter: FilterNode) -> None:  # noqa: B027 - optional hint
        """A hint, given before an operation's reads, that they keep only records
        matching ``filter`` (a scoped search): a store that loads its data in parts may
        look in the parts holding them first. Never changes a result. The default does
        nothing."""

    def expect_writes(self, stored: Mapping[str, Payload | None]) -> None:  # noqa: B027
        """A hint, given right before a write (``upsert``, ``delete``, ``update``) of the
        ids in ``stored``, of what each holds now: the payload stored under it, or
        ``None`` when no record has the id (a new record's fresh id: a promise the caller
        keeps). The caller holds these ids, so no other write of them runs in between. A
        store that keeps its data in parts may look for a record only in the part its
        payload routes to (checking it is there, falling back to the full look-up when not)
        and not at all for a fresh id. Never changes a result. The default does nothing."""

    def expect_exit(self) -> None:  # noqa: B027 - optional hook, default does nothing
        """A hint, given before the first operation, that the process ends after one
        command (the ``memoweave`` command line): a store may skip the work whose only use
        is to keep a long-running process's resident memory low. Never what a read or
        write needs. The default does nothing."""

    def close(self) -> None:  # noqa: B027 - optional hook, default does nothing
        """Flush and release the engine. Idempotent."""

    def close_at_exit(self) -> None:
        """:meth:`close` in a process that ends right after (the ``memoweave`` command
        line): a store may leave to the exit what the exit makes unnecessary, never what
        keeps an acknowledged write. The default closes."""
        self.close()

    def repair_collection(self, name: str) -> builtins.list[str]:
        """Repair what stops :meth:`ensure_collection` from opening the existing collection
        ``name`` (e.g. a lost metadata file rebuilt from the engine's own files) without
        deleting any record; one sentence per repair made. Run by ``memoweave doctor
        --repair``. The default has nothing to repair."""
        return []

    # -- optional async twins (same contract). The defaults run the sync method in a worker
    # thread; a provider with an async SDK overrides them with native async I/O, which
    # AsyncMemory then awaits (it runs the sync methods of the others in its own bounded
    # executor). See docs/plugins.md.

    @default_async
    async def aensure_collection(self, name: str, dims: int, metric: Metric = "cosine") -> None:
        """Async :meth:`ensure_collection`."""
        await to_thread(self.ensure_collection, name, dims, metric)

    @default_async
    async def aupsert(self, records: Sequence[VectorRecord]) -> None:
        """Async :meth:`upsert`."""
        await to_thread(self.upsert, records)

    @default_async
    async def asearch(
        self, vector: Sequence[float], *, top_k: int = 10, filter: FilterNode | None = None
    ) -> builtins.list[SearchHit]:
        """Async :meth:`search`."""
        return await to_thread(self.search, vector, top_k=top_k, filter=filter)

    @default_async
    async def aget(
        self, ids: Sequence[str], *, with_vectors: bool = False
    ) -> builtins.list[StoredRecord]:
        """Async :meth:`get`."""
        return await to_thread(self.get, ids, with_vectors=with_vectors)

    @default_async
    async def adelete(self, ids: Sequence[str]) -> None:
        """Async :meth:`delete`."""
        await to_thread(self.delete, ids)

    @default_async
    async def aupdate(
        self, id: str, *, vector: Sequence[float] | None = None, payload: Payload | None = None
    ) -> None:
        """Async :meth:`update`."""
        await to_thread(self.update, id, vector=vector, payload=payload)

    @default_async
    async def alist(
        self, *, filter: FilterNode | None = None, limit: int = 100, cursor: str | None = None
    ) -> Page:
        """Async :meth:`list`."""
        return await to_thread(self.list, filter=filter, limit=limit, cursor=cursor)

    @default_async
    async def acount(self, *, filter: FilterNode | None = None) -> int:
        """Async :meth:`count`."""
        return await to_thread(self.count, filter=filter)

    @default_async
    async def ahas_records(self, *, filter: FilterNode | None = None) -> bool:
        """Async :meth:`has_records`."""
        return await to_thread(self.has_records, filter=filter)

    @default_async
    async def adrop_collection(self) -> None:
        """Async :meth:`drop_collection`."""
        await to_thread(self.drop_collection)

    @default_async
    async def akeyword_search(
        self, text: str, *, top_k: int = 10, filter: FilterNode | None = None
    ) -> builtins.list[SearchHit]:
        """Async :meth:`keyword_search`."""
        return await to_thread(self.keyword_search, text, top_k=top_k, filter=filter)

    @default_async
    async def aclose(self) -> None:
        """Async :meth:`close`."""
        await to_thread(self.close)
