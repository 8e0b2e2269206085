"""The public ``Memory`` API, mem0-compatible in method names and return shapes.

Every method validates its input first and raises a typed ``MemoweaveError`` (code + hint)
before touching anything. Every read is filtered on the caller's scope; every write is
one journaled transaction across the vector store, the SQLite history and the keyword
index (see :mod:`memoweave.memory.transaction`).

The methods run the pipelines of :class:`memoweave.memory.operations.MemoryOperations` in
the calling thread, the same pipelines ``AsyncMemory`` runs on an event loop. One
instance may be shared by many threads: reads take no lock, a write holds nothing while
its LLM call runs, and writes apply in call order per scope (see
:mod:`memoweave.runtime.ordering`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memoweave.memory.operations import MemoryOperations
from memoweave.memory.wiring import MemoryProviders, build_providers
from memoweave.runtime.ordering import ThreadCoordinator
from memoweave.runtime.steps import run


class Memory:
    """Long-term memory for one application (see the package docs for the API)."""

    def __init__(self, config: Any = None, **overrides: Any) -> None:
        """Build from a ``MemoryConfig``, a dict, a YAML path or nothing (the embedded
        default stack). ``llm=``, ``embedder=``, ``vector_store=``, ``reranker=``,
        ``graph_store=`` take ready provider instances instead of configured ones."""
        self._providers: MemoryProviders = build_providers(config, **overrides)
        self.config = self._providers.config
        self._ops = MemoryOperations(self._providers, ThreadCoordinator())

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
        return run(
            self._ops.add(
                messages,
                user_id=user_id,
                agent_id=agent_id,
                run_id=run_id,
                metadata=metadata,
                infer=infer,
                memory_type=memory_type,
                prompt=prompt,
                expiration_date=expiration_date,
                observed_at=observed_at,
            )
        )

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
        return run(
            self._ops.update(
                memory_id,
                text,
                metadata,
                data=data,
                user_id=user_id,
                agent_id=agent_id,
                run_id=run_id,
            )
        )

    def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, str]:
        """Hard-delete one memory (recorded in its history)."""
        return run(self._ops.delete(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id))

    def delete_all(
        self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        """Hard-delete every memory of the scope and its message window."""
        return run(self._ops.delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id))

    def reset(self) -> None:
        """Delete everything: the collection, the history, the keyword and entity indexes,
        the graph."""
        run(self._ops.reset())

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
        (or by ``user_id`` / ``agent_id`` / ``run_id``); ``{"results": [item + score]}``,
        plus ``"relations"`` (mem0 v1's graph shape) when a graph store is configured."""
        return run(
            self._ops.search(
                query,
                filters=filters,
                top_k=top_k,
                threshold=threshold,
                rerank=rerank,
                explain=explain,
                include_superseded=include_superseded,
                show_expired=show_expired,
                user_id=user_id,
                agent_id=agent_id,
                run_id=run_id,
                limit=limit,
            )
        )

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
        return run(self._ops.get(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id))

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
        return run(
            self._ops.get_all(
                filters=filters,
                top_k=top_k,
                cursor=cursor,
                include_superseded=include_superseded,
                show_expired=show_expired,
                user_id=user_id,
                agent_id=agent_id,
                run_id=run_id,
                limit=limit,
            )
        )

    def history(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """The events of one memory, oldest first (ADD, UPDATE, SUPERSEDE, DELETE); kept
        after a delete. With scope ids given, a memory of another scope has no history
        (``[]``, as for an unknown id), like ``get`` / ``update`` / ``delete``."""
        return run(self._ops.history(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id))

    def close(self) -> None:
        """Release the providers and the history database. Idempotent."""
        run(self._ops.close())

    def _expect_exit(self) -> None:
        """For the command line's process, before its command: it ends after this one
        command (see ``VectorStore.expect_exit``)."""
        self._providers.vector_store.expect_exit()

    def _close_at_exit(self) -> None:
        """:meth:`close` for the command line's process, which ends right after: the
        vector store may leave to the exit what the exit makes unnecessary (see
        ``VectorStore.close_at_exit``)."""
        run(self._ops.close(at_exit=True))

    def _ensure_ready(self) -> None:
        """Bind the collection and roll back writes a crash left half-done (once)."""
        run(self._ops.ensure_ready())

    @contextmanager
    def _claimed(self, ids: Collection[str] | None = None) -> Iterator[None]:
        """For tools writing beside the API (export, import): open the memory, then hold
        the claims on ``ids`` (everything when ``None``) for the block, so no write of this
        instance changes those memories meanwhile."""
        self._ensure_ready()
        coordinator = self._ops.coordinator
        assert isinstance(coordinator, ThreadCoordinator)
        if ids is None:
            coordinator.acquire_all()
        else:
            coordinator.acquire(ids)
        try:
            yield
        finally:
            if ids is None:
                coordinator.release_all()
            else:
                coordinator.release(ids)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
