"""The one write path: every change memoweave makes is a list of actions applied here.

``add`` (whatever its strategy), ``update``, ``delete``, ``delete_all`` and supersessions
all run as pipelines (:mod:`memoweave.runtime.steps`) of two phases:

1. **prepare** (:meth:`MemoryWriter.prepare`), outside any lock: every new text is
   embedded in ONE embedder call. Callers plan before that, also outside any lock (the
   LLM call, the related-memory lookup).
2. **apply** (:meth:`MemoryWriter.apply`): the write claims the ids its actions target
   (:mod:`memoweave.runtime.ordering`), reads them again with their vectors, reads the
   scope's active memories with the same text hashes, builds the plan
   (:func:`memoweave.memory.write_plan.build_plan`, which re-checks every target) and
   applies it through the journaled transaction
   (:func:`memoweave.memory.transaction.apply_plan`): a failure at any step leaves store,
   history, indexes and graph as they were.

:meth:`MemoryWriter.ordered` runs both phases in the scope's turn: writes to one scope
apply in call order, writes to different scopes in parallel, and an apply is never
abandoned halfway by a cancelled caller.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from memoweave.errors import EmbeddingError
from memoweave.filters import And, Comparison
from memoweave.index import SideIndexes
from memoweave.memory.actions import DeleteMemory, WriteAction
from memoweave.memory.clock import iso
from memoweave.memory.history import HistoryStore
from memoweave.memory.payload import STATUS_ACTIVE
from memoweave.memory.scope import Scope
from memoweave.memory.transaction import apply_plan
from memoweave.memory.write_plan import (
    PreparedWrite,
    WriteContext,
    Written,
    build_plan,
    new_text,
)
from memoweave.providers.embedder import Embedder
from memoweave.providers.graph_store import GraphStore
from memoweave.providers.vector_store import STATUS_KEY, VectorStore
from memoweave.runtime.ordering import Coordinator
from memoweave.runtime.steps import Steps, call, shielded

P = TypeVar("P")
T = TypeVar("T")

DELETE_PAGE = 500
"""Memories ``delete_all`` deletes per journaled write."""


class MemoryWriter:
    """Prepares and applies writes against one store, history and side indexes."""

    def __init__(
        self,
        store: VectorStore,
        embedder: Embedder,
        history: HistoryStore,
        indexes: SideIndexes | None,
        coordinator: Coordinator,
        graph: GraphStore | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.history = history
        self.indexes = indexes
        self.coordinator = coordinator
        self.graph = graph

    def ordered(self, key: str, plan: Steps[P], apply: Callable[[P], Steps[T]]) -> Steps[T]:
        """Run ``plan`` at once, then ``apply`` its result after every earlier write of
        scope ``key`` (shielded: it finishes even if the caller is cancelled)."""
        coordinator = self.coordinator
        turn = coordinator.take_turn(key)
        try:
            planned = yield from plan
            yield call(coordinator.wait_turn, turn)
            applied: T = yield shielded(apply(planned))
            return applied
        finally:
            coordinator.release_turn(turn)

    def prepare(self, actions: Sequence[WriteAction], ctx: WriteContext) -> Steps[PreparedWrite]:
        """Embed the new texts of ``actions`` (each distinct text once, one call)."""
        positions: dict[str, list[int]] = {}
        for index, action in enumerate(actions):
            text = new_text(action)
            if text is not None:
                positions.setdefault(text, []).append(index)
        unique = list(positions)
        vectors = (yield call(self.embedder.embed, unique, purpose="document")) if unique else []
        if len(vectors) != len(unique):
            raise EmbeddingError(
                f"the embedder returned {len(vectors)} vectors for {len(unique)} texts",
                hint="The embedder must return one vector per input text.",
            )
        texts = {
            index: (text, vector)
            for text, vector in zip(unique, vectors, strict=True)
            for index in positions[text]
        }
        return PreparedWrite(tuple(actions), ctx, texts)

    def apply(self, prepared: PreparedWrite) -> Steps[Written]:
        """Claim the targets of ``prepared``, re-read them and apply the journaled write."""
        ids = prepared.targets
        coordinator = self.coordinator
        yield call(coordinator.acquire, ids)
        try:
            found = (yield call(self.store.get, ids, with_vectors=True)) if ids else []
            records = {r.id: r for r in found}
            scope = prepared.ctx.scope
            hashes = prepared.dedupe_hashes() if scope is not None else []
            existing = (yield from self._active_hashes(scope, hashes)) if hashes else {}
            plan, written = build_plan(prepared, records, existing, self.history, self.indexes)
            now = iso(prepared.ctx.now)
            yield from apply_plan(plan, self.store, self.history, now, self.graph)
            return written
        finally:
            coordinator.release(ids)

    def write(self, key: str, actions: Sequence[WriteAction], ctx: WriteContext) -> Steps[Written]:
        """Prepare and apply ``actions`` in scope ``key``'s turn."""
        return self.ordered(key, self.prepare(actions, ctx), self.apply)

    def delete_scope(self, scope: Scope, ctx: WriteContext) -> Steps[int]:
        """Hard-delete every memory of ``scope``, a page per journaled write, then its
        message window and index rows; returns how many memories were deleted."""
        deleted = 0
        while True:
            page = yield call(self.store.list, filter=scope.filter(), limit=DELETE_PAGE)
            if not page.records:
                break
            actions = [DeleteMemory(r.id, missing_ok=True) for r in page.records]
            written = yield from self.apply(PreparedWrite(tuple(actions), ctx))
            deleted += len(written.results)
        yield from self.apply(PreparedWrite((), replace(ctx, forget_scope=True)))
        return deleted

    def _active_hashes(self, scope: Scope | None, hashes: list[str]) -> Steps[dict[str, str]]:
        """Active memories of ``scope`` among ``hashes``: hash → id."""
        assert scope is not None
        node = And(
            (
                scope.filter(),
                Comparison("hash", "in", tuple(dict.fromkeys(hashes))),
                Comparison(STATUS_KEY, "eq", STATUS_ACTIVE),
            )
        )
        page = yield call(self.store.list, filter=node, limit=max(len(hashes), 1) * 2)
        return {r.payload["hash"]: r.id for r in page.records}
