"""Opening, resetting and closing one memory instance, as pipelines
(:mod:`memoweave.runtime.steps`).

Opening (once, on the first operation, and again after a ``reset``) binds the collection
and the graph, finishes a reset a crash interrupted, rolls back the writes a crash left
half-done and checks that store and history agree (:mod:`memoweave.memory.consistency`).
All three take the exclusive claim of the instance's
:class:`~memoweave.runtime.ordering.Coordinator`, so no write applies meanwhile.
"""

from __future__ import annotations

from memoweave.memory.consistency import check_on_open, reset_all, reset_interrupted
from memoweave.memory.transaction import recover
from memoweave.memory.wiring import MemoryProviders
from memoweave.providers.embedder import Embedder
from memoweave.providers.graph_checks import graph_name_for
from memoweave.runtime.ordering import Coordinator
from memoweave.runtime.steps import Steps, call


class Lifecycle:
    """Open (once), reset and close (once) the providers of one memory instance."""

    def __init__(self, providers: MemoryProviders, coordinator: Coordinator) -> None:
        self.providers = providers
        self.coordinator = coordinator
        self._ready = False
        self._closed = False

    def ensure_ready(self) -> Steps[None]:
        """Bind the collection, finish an interrupted reset, roll back writes a crash left
        half-done and check that store and history agree (once)."""
        if self._ready:
            return
        p, collection = self.providers, self.providers.config.collection_name
        yield call(self.coordinator.acquire_all)
        try:
            if self._ready:
                return
            dims = yield call(_dims_of, p.embedder)  # may ask a server (store-side embeddings)
            if dims is None:
                probe = yield call(p.embedder.embed, ["dimension probe"], purpose="document")
                dims = len(probe[0])
            yield call(p.vector_store.ensure_collection, collection, dims, "cosine")
            if p.graph_store is not None:
                yield call(p.graph_store.ensure_graph, graph_name_for(collection))
            if (yield call(reset_interrupted, p.history)):
                yield from reset_all(p)  # a reset a crash interrupted: finish it
            yield from recover(p.vector_store, p.history, p.graph_store)
            yield from check_on_open(p.vector_store, p.history, collection)
            self._ready = True
        finally:
            self.coordinator.release_all()

    def reset(self) -> Steps[None]:
        """Empty store, graph, history and side indexes (the next operation opens again)."""
        yield from self.ensure_ready()
        yield call(self.coordinator.acquire_all)
        try:
            yield from reset_all(self.providers)
            self._ready = False
        finally:
            self.coordinator.release_all()

    def close(self, *, at_exit: bool = False) -> Steps[None]:
        """Release the providers and the history database, after the writes applying
        (once: a second close does nothing); ``at_exit``: the process ends right after,
        the vector store gets ``VectorStore.close_at_exit``."""
        p = self.providers
        yield call(self.coordinator.acquire_all)
        try:
            if self._closed:
                return
            self._closed = True
            for provider in p.models:
                if provider is p.vector_store and at_exit:
                    yield call(p.vector_store.close_at_exit)
                elif provider is not None:
                    yield call(provider.close)
            yield call(p.history.close)
        finally:
            self.coordinator.release_all()


def _dims_of(embedder: Embedder) -> int | None:
    return embedder.dims
