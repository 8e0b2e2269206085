"""The public operations as pipelines, shared by ``Memory`` and ``AsyncMemory``.

Each method of :class:`MemoryOperations` validates its arguments first (raising a typed
``MemoweaveError`` before any step) and then yields its I/O as steps
(:mod:`memoweave.runtime.steps`): ``Memory`` drives them in the calling thread,
``AsyncMemory`` on its event loop. So both APIs have the same arguments, results and
errors by construction.

Concurrency: reads take no lock. A write plans outside any lock (the LLM call, the
related-memory lookup, the embeddings) and applies in its scope's turn under claims on
the memories it changes (:class:`memoweave.memory.writer.MemoryWriter`). Opening,
``reset`` and ``close`` take the exclusive claim.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from memoweave.errors import NotFound, ValidationError
from memoweave.memory.by_id import expect_owner, fetch, optional_scope, scope_key
from memoweave.memory.clock import utcnow
from memoweave.memory.items import result_item, to_item
from memoweave.memory.lifecycle import Lifecycle
from memoweave.memory.metadata import validate_metadata
from memoweave.memory.read_filter import scoped_read, visible_statuses
from memoweave.memory.scope import Scope
from memoweave.memory.validate import (
    check_bool,
    check_expiration,
    check_memory_id,
    check_observed_at,
    check_query,
    check_text,
    check_text_size,
    check_threshold,
    check_top_k,
)
from memoweave.memory.wiring import MemoryProviders
from memoweave.retrieval import Retriever
from memoweave.runtime.ordering import Coordinator
from memoweave.runtime.steps import Steps, call, done

if TYPE_CHECKING:
    from memoweave.memory.write_plan import PreparedWrite
    from memoweave.memory.writer import MemoryWriter

# The write path (actions, strategies, the writer and what they import) is imported by
# the first write: a process that only searches, such as ``memoweave search``, never
# loads it.


class MemoryOperations:
    """The pipelines of one memory instance (see the module docstring)."""

    def __init__(self, providers: MemoryProviders, coordinator: Coordinator) -> None:
        self.providers = providers
        self.coordinator = coordinator
        self._writer: MemoryWriter | None = None
        self._writer_made = threading.Lock()
        self.retriever = Retriever(
            store=providers.vector_store,
            embedder=providers.embedder,
            indexes=providers.indexes,
            reranker=providers.reranker,
            late_interaction=providers.late_interaction,
            settings=providers.retrieval,
            graph=providers.graph_store,
        )
        self.lifecycle = Lifecycle(providers, coordinator)
        self._max_text = providers.config.limits.max_text_chars

    @property
    def writer(self) -> MemoryWriter:
        """The executor of every write, made by the first one (once, whichever thread)."""
        writer = self._writer
        if writer is None:
            with self._writer_made:
                if self._writer is None:
                    from memoweave.memory.writer import MemoryWriter

                    p = self.providers
                    self._writer = MemoryWriter(
                        p.vector_store,
                        p.embedder,
                        p.history,
                        p.indexes,
                        self.coordinator,
                        p.graph_store,
                    )
                writer = self._writer
        return writer

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
    ) -> Steps[dict[str, Any]]:
        """See :meth:`memoweave.Memory.add`."""
        from memoweave.memory.actions import ExtractionRequest
        from memoweave.memory.add_context import extraction_context, stored_message
        from memoweave.memory.messages import normalize_messages
        from memoweave.memory.strategies import select_strategy
        from memoweave.memory.write_plan import WriteContext

        scope = Scope.of(user_id=user_id, agent_id=agent_id, run_id=run_id, operation="add()")
        normalized = normalize_messages(messages)
        check_text_size("messages", sum(len(m.text) for m in normalized), self._max_text)
        meta = validate_metadata(metadata)
        check_bool("infer", infer)
        if prompt is not None and not isinstance(prompt, str):
            raise ValidationError("prompt must be a string", hint="Pass prompt='...' or omit it.")
        if prompt is not None:
            check_text("prompt", prompt)
        expiration = check_expiration(expiration_date)
        now = utcnow()
        observed = check_observed_at(observed_at) or now
        strategy = select_strategy(
            self.providers, infer=infer, memory_type=memory_type, scope=scope
        )
        if self.providers.indexes is not None:
            self.providers.indexes.will_write()
        self.providers.vector_store.expect_reads(scope.filter())
        yield from self.ensure_ready()
        ctx = WriteContext(
            scope=scope,
            now=now,
            observed_at=observed,
            metadata=meta,
            memory_type=memory_type,
            expiration=expiration,
            messages=[stored_message(m, scope, observed) for m in normalized],
        )

        def plan() -> Steps[PreparedWrite]:
            related, window = yield from extraction_context(
                self.providers,
                self.retriever.keyword_index,
                scope,
                "\n".join(m.text for m in normalized),
                needs_related=strategy.needs_related,
            )
            request = ExtractionRequest(
                messages=normalized,
                observed_at=observed,
                related=related,
                window=window,
                custom_prompt=prompt or self.providers.custom_instructions,
                as_text=isinstance(messages, str),
            )
            actions = yield from strategy.plan(request)
            return (yield from self.writer.prepare(actions, ctx))

        written = yield from self.writer.ordered(scope.key(), plan(), self.writer.apply)
        return {"results": [r for r in written.results if r["event"] != "NONE"]}

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
    ) -> Steps[dict[str, Any]]:
        """See :meth:`memoweave.Memory.update`."""
        check_memory_id(memory_id)
        if text is not None and data is not None:
            raise ValidationError("pass text or data, not both", hint="Use text='...'.")
        text = text if text is not None else data
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise ValidationError(
                "text must be a non-empty string", hint="Pass the new memory text."
            )
        if text is not None:
            check_text_size("text", len(text), self._max_text)
            check_text("text", text)
        meta = validate_metadata(metadata) if metadata is not None else None
        if text is None and meta is None:
            raise ValidationError(
                "nothing to update", hint="Pass text='...' and/or metadata={...}."
            )
        scope = optional_scope(user_id, agent_id, run_id)
        yield from expect_owner(
            self.providers.vector_store, self.providers.history, memory_id, scope
        )
        yield from self.ensure_ready()
        record = yield from fetch(self.providers.vector_store, memory_id, scope)
        from memoweave.memory.actions import EditMemory
        from memoweave.memory.write_plan import WriteContext

        ctx = WriteContext(scope=scope, now=utcnow())
        action = EditMemory(memory_id, text=text, metadata=meta)
        written = yield from self.writer.write(scope_key(record), [action], ctx)
        return {
            "message": "Memory updated successfully!",
            **to_item(memory_id, written.payloads[memory_id]),
        }

    def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> Steps[dict[str, str]]:
        """See :meth:`memoweave.Memory.delete`."""
        check_memory_id(memory_id)
        scope = optional_scope(user_id, agent_id, run_id)
        yield from expect_owner(
            self.providers.vector_store, self.providers.history, memory_id, scope
        )
        yield from self.ensure_ready()
        record = yield from fetch(self.providers.vector_store, memory_id, scope)
        from memoweave.memory.actions import DeleteMemory
        from memoweave.memory.write_plan import WriteContext

        ctx = WriteContext(scope=scope, now=utcnow())
        yield from self.writer.write(scope_key(record), [DeleteMemory(memory_id)], ctx)
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> Steps[dict[str, str]]:
        """See :meth:`memoweave.Memory.delete_all`."""
        scope = Scope.of(
            user_id=user_id, agent_id=agent_id, run_id=run_id, operation="delete_all()"
        )
        yield from self.ensure_ready()
        from memoweave.memory.write_plan import WriteContext

        ctx = WriteContext(scope=scope, now=utcnow())
        graph = self.providers.graph_store

        def forget(_: None) -> Steps[None]:
            yield from self.writer.delete_scope(scope, ctx)
            if graph is not None:
                yield call(graph.delete_scope, scope.as_dict())

        yield from self.writer.ordered(scope.key(), done(None), forget)
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> Steps[None]:
        """See :meth:`memoweave.Memory.reset`."""
        return self.lifecycle.reset()

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
    ) -> Steps[dict[str, Any]]:
        """See :meth:`memoweave.Memory.search`."""
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
        self.providers.vector_store.expect_reads(node)
        yield from self.ensure_ready()
        graph = yield from self.retriever.graph_context(query, scope=scope)
        ranked = yield from self.retriever.search(
            query,
            scope=scope,
            node=node,
            top_k=top_k,
            threshold=threshold,
            rerank=rerank,
            statuses=visible_statuses(include_superseded),
            now=utcnow(),
            graph=graph,
        )
        out: dict[str, Any] = {"results": [result_item(c, explain=explain) for c in ranked]}
        if self.providers.graph_store is not None:
            out["relations"] = yield from self.retriever.relations(graph, node=node, ranked=ranked)
        return out

    def get(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> Steps[dict[str, Any] | None]:
        """See :meth:`memoweave.Memory.get`."""
        check_memory_id(memory_id)
        scope = optional_scope(user_id, agent_id, run_id)
        yield from expect_owner(
            self.providers.vector_store, self.providers.history, memory_id, scope
        )
        yield from self.ensure_ready()
        try:
            record = yield from fetch(self.providers.vector_store, memory_id, scope)
        except NotFound:
            return None
        return to_item(record.id, record.payload)

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
    ) -> Steps[dict[str, Any]]:
        """See :meth:`memoweave.Memory.get_all`."""
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
        yield from self.ensure_ready()
        page = yield call(self.providers.vector_store.list, filter=node, limit=top_k, cursor=cursor)
        return {
            "results": [to_item(r.id, r.payload) for r in page.records],
            "next_cursor": page.next_cursor,
        }

    def history(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> Steps[list[dict[str, Any]]]:
        """See :meth:`memoweave.Memory.history`."""
        check_memory_id(memory_id)
        scope = optional_scope(user_id, agent_id, run_id)
        yield from self.ensure_ready()
        events: list[dict[str, Any]] = yield call(self.providers.history.events, memory_id)
        if scope is not None and not all(scope.contains(e) for e in events):
            return []  # another scope's memory reads exactly like an unknown id
        return events

    # -- lifecycle --------------------------------------------------------------------------

    def ensure_ready(self) -> Steps[None]:
        """See :meth:`memoweave.memory.lifecycle.Lifecycle.ensure_ready`."""
        return self.lifecycle.ensure_ready()

    def close(self, *, at_exit: bool = False) -> Steps[None]:
        """See :meth:`memoweave.memory.lifecycle.Lifecycle.close`; then the retriever's
        worker thread stops."""
        try:
            yield from self.lifecycle.close(at_exit=at_exit)
        finally:
            self.retriever.close()
