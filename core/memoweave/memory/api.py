"""The public ``Memory`` API, mem0-compatible in method names and return shapes.

Every method validates its input first and raises a typed ``MemoweaveError`` (code + hint)
before touching anything. Every read is filtered on the caller's scope; every write is
one journaled transaction across the vector store, the SQLite history and the keyword
index (see :mod:`memoweave.memory.transaction`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from memoweave.errors import NotFound, ValidationError
from memoweave.memory import items as it
from memoweave.memory.actions import ExistingMemory, ExtractionRequest
from memoweave.memory.edits import delete_memories, update_memory
from memoweave.memory.history import StoredMessage
from memoweave.memory.messages import NormalizedMessage, normalize_messages
from memoweave.memory.providers import MemoryProviders, build_providers
from memoweave.memory.related import related_memories
from memoweave.memory.scope import Scope
from memoweave.memory.search import result_item, scoped_read, visible_statuses
from memoweave.memory.strategies import select_strategy
from memoweave.memory.transaction import recover
from memoweave.memory.validate import (
    check_bool,
    check_expiration,
    check_memory_id,
    check_observed_at,
    check_query,
    check_threshold,
    check_top_k,
)
from memoweave.memory.writer import MemoryWriter, WriteContext
from memoweave.providers.graph_checks import graph_name_for
from memoweave.retrieval import Retriever

_DELETE_PAGE = 500


class Memory:
    """Long-term memory for one application (see the package docs for the API)."""

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        """Build from a ``MemoryConfig``, a dict, a YAML path or nothing (the embedded
        default stack). ``llm=``, ``embedder=``, ``vector_store=``, ``reranker=``,
        ``graph_store=`` take ready provider instances instead of configured ones."""
        self._providers: MemoryProviders = build_providers(config, **overrides)
        self.config = self._providers.config
        self._writer = MemoryWriter(
            self._providers.vector_store,
            self._providers.embedder,
            self._providers.history,
            self._providers.indexes,
        )
        self._retriever = Retriever(
            store=self._providers.vector_store,
            embedder=self._providers.embedder,
            indexes=self._providers.indexes,
            reranker=self._providers.reranker,
            settings=self._providers.retrieval,
        )
        self._lock = threading.RLock()
        self._ready = False

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | str | Path) -> Memory:
        """mem0's constructor: a config dict or a YAML file path."""
        return cls(config)

    # -- writes -----------------------------------------------------------------------------

    def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        expiration_date: Any = None,
        observed_at: Any = None,
    ) -> dict[str, Any]:
        """Distil ``messages`` into memories of the scope; returns ``{"results": [...]}``
        with one ``{"id", "memory", "event"}`` per change (ADD, UPDATE, SUPERSEDE, DELETE)."""
        scope = Scope.of(user_id=user_id, agent_id=agent_id, run_id=run_id, operation="add()")
        normalized = normalize_messages(messages)
        meta = it.validate_metadata(metadata)
        check_bool("infer", infer)
        if prompt is not None and not isinstance(prompt, str):
            raise ValidationError("prompt must be a string", hint="Pass prompt='...' or omit it.")
        expiration = check_expiration(expiration_date)
        now = it.utcnow()
        observed = check_observed_at(observed_at) or now
        strategy = select_strategy(
            self._providers, infer=infer, memory_type=memory_type, scope=scope
        )
        with self._lock:
            self._ensure_ready()
            text = "\n".join(m.text for m in normalized)
            related = self._related(scope, text) if strategy.needs_related else []
            window = self._window(scope)
            request = ExtractionRequest(
                messages=normalized,
                scope=scope,
                observed_at=observed,
                related=related,
                window=window,
                custom_prompt=prompt or self._providers.custom_instructions,
                memory_type=memory_type,
                metadata=meta,
            )
            actions = strategy.plan(request)
            ctx = WriteContext(
                scope=scope,
                now=now,
                observed_at=observed,
                metadata=meta,
                memory_type=memory_type,
                expiration=expiration,
                messages=[_stored(m, scope, observed) for m in normalized],
            )
            results = self._writer.write(actions, ctx)
        return {"results": [r for r in results if r["event"] != "NONE"]}

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        data: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """Rewrite a memory's text and/or replace its metadata (identity keys never change).
        ``data`` is mem0's name for ``text``."""
        check_memory_id(memory_id)
        if text is not None and data is not None:
            raise ValidationError("pass text or data, not both", hint="Use text='...'.")
        text = text if text is not None else data
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise ValidationError(
                "text must be a non-empty string", hint="Pass the new memory text."
            )
        meta = it.validate_metadata(metadata) if metadata is not None else None
        if text is None and meta is None:
            raise ValidationError(
                "nothing to update", hint="Pass text='...' and/or metadata={...}."
            )
        with self._lock:
            self._ensure_ready()
            before = self._fetch(memory_id, user_id, agent_id, run_id)
            payload = update_memory(self._writer, before, text=text, metadata=meta, now=it.utcnow())
        return {"message": "Memory updated successfully!", **it.to_item(memory_id, payload)}

    def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, str]:
        """Hard-delete one memory (recorded in its history)."""
        check_memory_id(memory_id)
        with self._lock:
            self._ensure_ready()
            record = self._fetch(memory_id, user_id, agent_id, run_id)
            delete_memories(self._writer, [record], now=it.utcnow())
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        """Hard-delete every memory of the scope and its message window."""
        scope = Scope.of(
            user_id=user_id, agent_id=agent_id, run_id=run_id, operation="delete_all()"
        )
        store = self._providers.vector_store
        with self._lock:
            self._ensure_ready()
            while True:
                page = store.list(filter=scope.filter(), limit=_DELETE_PAGE)
                if not page.records:
                    break
                records = store.get([r.id for r in page.records], with_vectors=True)
                delete_memories(self._writer, records, now=it.utcnow())
            with self._providers.history.transaction() as conn:
                self._providers.history.delete_scope_messages(conn, scope.as_dict())
                if self._providers.indexes is not None:
                    self._providers.indexes.delete_scope(conn, scope)
            if self._providers.graph_store is not None:
                self._providers.graph_store.delete_scope(scope.as_dict())
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Delete everything: the collection, the history, the keyword and entity indexes,
        the graph."""
        with self._lock:
            self._ensure_ready()
            self._providers.vector_store.drop_collection()
            if self._providers.graph_store is not None:
                self._providers.graph_store.drop_graph()
            self._providers.history.reset()
            if self._providers.indexes is not None:
                self._providers.indexes.reset()
            self._ready = False

    # -- reads ------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        filters: Mapping[str, Any] | None = None,
        top_k: int = 20,
        threshold: float | None = None,
        rerank: bool = False,
        explain: bool = False,
        include_superseded: bool = False,
        show_expired: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """The memories most relevant to ``query`` within the scope named in ``filters``
        (or by ``user_id`` / ``agent_id`` / ``run_id``); ``{"results": [item + score]}``."""
        check_query(query)
        top_k = check_top_k(limit if limit is not None else top_k)
        check_threshold(threshold)
        check_bool("rerank", rerank)
        check_bool("explain", explain)
        scope, node = scoped_read(
            filters,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            include_superseded=include_superseded,
            show_expired=show_expired,
            operation="search()",
        )
        with self._lock:
            self._ensure_ready()
            ranked = self._retriever.search(
                query,
                scope=scope,
                node=node,
                top_k=top_k,
                threshold=threshold,
                rerank=rerank,
                statuses=visible_statuses(include_superseded),
                now=it.utcnow(),
            )
        return {"results": [result_item(c, explain=explain) for c in ranked]}

    def get(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any] | None:
        """One memory by id, or ``None`` (mem0's behaviour). With scope ids given, a memory
        of another scope is ``None`` too."""
        check_memory_id(memory_id)
        with self._lock:
            self._ensure_ready()
            try:
                record = self._fetch(memory_id, user_id, agent_id, run_id, with_vectors=False)
            except NotFound:
                return None
        return it.to_item(record.id, record.payload)

    def get_all(
        self,
        *,
        filters: Mapping[str, Any] | None = None,
        top_k: int = 100,
        cursor: str | None = None,
        include_superseded: bool = False,
        show_expired: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """One page of the scope's memories: ``{"results": [...], "next_cursor": str|None}``."""
        top_k = check_top_k(limit if limit is not None else top_k)
        if cursor is not None and not isinstance(cursor, str):
            raise ValidationError(
                "cursor must be the string returned as next_cursor",
                hint="Pass next_cursor from the previous page.",
            )
        _, node = scoped_read(
            filters,
            user_id=user_id,
            agent_id=agent_id,
            run_id=run_id,
            include_superseded=include_superseded,
            show_expired=show_expired,
            operation="get_all()",
        )
        with self._lock:
            self._ensure_ready()
            page = self._providers.vector_store.list(filter=node, limit=top_k, cursor=cursor)
        return {
            "results": [it.to_item(r.id, r.payload) for r in page.records],
            "next_cursor": page.next_cursor,
        }

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The events of one memory, oldest first (ADD, UPDATE, SUPERSEDE, DELETE)."""
        check_memory_id(memory_id)
        with self._lock:
            self._ensure_ready()
            return self._providers.history.events(memory_id)

    def close(self) -> None:
        """Release the providers and the history database. Idempotent."""
        with self._lock:
            self._providers.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals --------------------------------------------------------------------------

    def _ensure_ready(self) -> None:
        if self._ready:
            return
        providers = self._providers
        dims = providers.embedder.dims
        if dims is None:
            dims = len(providers.embedder.embed(["dimension probe"], purpose="document")[0])
        providers.vector_store.ensure_collection(self.config.collection_name, dims, "cosine")
        if providers.graph_store is not None:
            providers.graph_store.ensure_graph(graph_name_for(self.config.collection_name))
        recover(providers.vector_store, providers.history)
        self._ready = True

    def _fetch(
        self,
        memory_id: str,
        user_id: str | None,
        agent_id: str | None,
        run_id: str | None,
        *,
        with_vectors: bool = True,
    ) -> Any:
        found = self._providers.vector_store.get([memory_id], with_vectors=with_vectors)
        given = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        scope = (
            Scope.of(**given, operation="this call")
            if any(v is not None for v in given.values())
            else None
        )
        if not found or (scope is not None and not scope.contains(found[0].payload)):
            raise NotFound(f"no memory with id {memory_id}" + (" in this scope" if scope else ""))
        return found[0]

    def _related(self, scope: Scope, text: str) -> list[ExistingMemory]:
        p = self._providers
        hits = related_memories(
            p.vector_store,
            self._retriever.keyword_index,
            p.history,
            text,
            scope=scope,
            limit=p.related_limit,
        )
        return [
            ExistingMemory(h.id, h.payload.get("memory", ""), h.payload.get("created_at"))
            for h in hits
        ]

    def _window(self, scope: Scope) -> list[NormalizedMessage]:
        rows = self._providers.history.recent_messages(scope.key(), self._providers.window_messages)
        return [NormalizedMessage(r.role, r.content, r.id, r.name, (), r.created_at) for r in rows]


def _stored(message: NormalizedMessage, scope: Scope, observed: datetime) -> StoredMessage:
    return StoredMessage(
        id=message.id,  # normalize_messages always sets an id
        scope=scope.key(),
        role=message.role,
        content=message.text,
        created_at=message.created_at or it.iso(observed),
        name=message.name,
        **scope.as_dict(),
    )
