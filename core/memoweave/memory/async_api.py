"""``AsyncMemory``: the ``Memory`` API for asyncio applications (FastAPI, MCP, agents).

Same methods, arguments, results and errors as :class:`memoweave.Memory`, awaited: both
run the same pipelines (:class:`memoweave.memory.operations.MemoryOperations`). Here they
run on the event loop (:class:`memoweave.runtime.aio.AsyncRunner`):

- a provider with native async I/O (``AsyncOpenAI``, Ollama's ``AsyncClient``,
  ``AsyncQdrantClient``...) is awaited through its ``a<method>`` twins; a provider with
  only the sync contract (Qdrant Edge, ONNX, a third-party plugin) and SQLite run in ONE
  bounded thread pool owned by the instance (``max_workers`` threads);
- the query embedding and the keyword search of a ``search`` run together; concurrent
  ``add`` calls to different scopes proceed in parallel (nothing is held during an LLM
  call), ``add`` calls to one scope apply in call order; the texts that concurrent calls
  embed at the same moment go to the embedder in one batch;
- a write whose caller is cancelled while it applies still finishes its journaled write
  (a cancelled ``add`` is either fully written or not at all).

One instance belongs to one event loop: create it (or at least first use it) inside the
loop that awaits it, and ``await memory.close()`` (or ``async with``) when done.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memoweave.errors import ValidationError
from memoweave.memory.operations import MemoryOperations
from memoweave.memory.wiring import MemoryProviders, build_providers
from memoweave.runtime.aio import AsyncRunner
from memoweave.runtime.ordering import LoopCoordinator


def default_workers() -> int:
    """The executor size when none is given: the CPUs plus 4, at most 32 (as asyncio's)."""
    return min(32, (os.cpu_count() or 1) + 4)


class AsyncMemory:
    """Long-term memory for one asyncio application; see :class:`memoweave.Memory`."""

    def __init__(
        self, config: Any = None, *, max_workers: int | None = None, **overrides: Any
    ) -> None:
        """Build like :class:`memoweave.Memory`; ``max_workers`` bounds the threads that
        run the providers without async I/O (default :func:`default_workers`)."""
        workers = default_workers() if max_workers is None else max_workers
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValidationError(
                f"max_workers must be a positive integer, got {max_workers!r}",
                hint="Pass max_workers=8, or omit it.",
            )
        self._providers: MemoryProviders = build_providers(config, **overrides)
        self.config = self._providers.config
        self._ops = MemoryOperations(self._providers, LoopCoordinator())
        p = self._providers
        self._runner = AsyncRunner(
            p.models,
            max_workers=workers,
            coalesce=(p.embedder.embed,),
        )
        self._closed = False

    @classmethod
    def from_config(
        cls, config: Mapping[str, Any] | str | Path, *, max_workers: int | None = None
    ) -> AsyncMemory:
        """mem0's constructor: a config dict or a YAML file path."""
        return cls(config, max_workers=max_workers)

    # -- writes -----------------------------------------------------------------------------

    async def add(
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
        """See :meth:`memoweave.Memory.add`."""
        return await self._runner.run(
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

    async def update(
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
        """See :meth:`memoweave.Memory.update`."""
        return await self._runner.run(
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

    async def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, str]:
        """See :meth:`memoweave.Memory.delete`."""
        return await self._runner.run(
            self._ops.delete(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
        )

    async def delete_all(
        self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        """See :meth:`memoweave.Memory.delete_all`."""
        return await self._runner.run(
            self._ops.delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id)
        )

    async def reset(self) -> None:
        """See :meth:`memoweave.Memory.reset`."""
        await self._runner.run(self._ops.reset())

    # -- reads ------------------------------------------------------------------------------

    async def search(
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
        """See :meth:`memoweave.Memory.search`."""
        return await self._runner.run(
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

    async def get(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any] | None:
        """See :meth:`memoweave.Memory.get`."""
        return await self._runner.run(
            self._ops.get(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
        )

    async def get_all(
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
        """See :meth:`memoweave.Memory.get_all`."""
        return await self._runner.run(
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

    async def history(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """See :meth:`memoweave.Memory.history`."""
        return await self._runner.run(
            self._ops.history(memory_id, user_id=user_id, agent_id=agent_id, run_id=run_id)
        )

    async def close(self) -> None:
        """Release the providers, the history database and the executor. Idempotent."""
        if self._closed:
            return
        try:
            await self._runner.run(self._ops.close())
        finally:
            self._closed = True
            self._runner.close()

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
