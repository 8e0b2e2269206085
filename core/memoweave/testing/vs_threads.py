"""Vector store mixin: one store instance shared by threads (``Memory`` shares its store
between every thread that uses it)."""

from __future__ import annotations

import threading

from memoweave.providers.vector_store import VectorStore
from memoweave.testing.vs_base import ids_of, record

THREADS = 4
WRITES = 15


class ThreadSafetyTests:
    """Concurrent upserts, searches, gets and counts from several threads."""

    def test_threads_share_one_store(self, vector_store: VectorStore) -> None:
        """Four threads upserting, searching, getting and counting at once: no error, and
        every record written is there afterwards.

        Troubleshooting: ``Memory`` calls one store instance from many threads. An engine
        or client that is not thread-safe (an in-process engine with shared arrays, one
        connection used without a lock) must serialise its calls behind a lock.
        """
        errors: list[BaseException] = []

        def work(t: int) -> None:
            try:
                for i in range(WRITES):
                    rec = record(f"thread-{t}-{i}", {"user_id": f"u{t}", "memory": f"note {i}"})
                    vector_store.upsert([rec])
                    vector_store.search(rec.vector, top_k=3)
                    assert ids_of(vector_store.get([rec.id])) == [rec.id]
                    vector_store.count()
            except BaseException as exc:  # reported below, with the thread's traceback
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not errors, f"{len(errors)} failure(s) across threads; first: {errors[0]!r}"
        assert vector_store.count() == THREADS * WRITES
