"""A search ranks the query's keywords while its query is embedded and the dense search
runs: in the retriever's one worker thread under ``Memory`` (closed with it), as tasks
under ``AsyncMemory``; a failure on either side is the search's typed error."""

from __future__ import annotations

import gc
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memoweave.errors import EmbeddingError, HistoryError
from memoweave.index.keyword_index import KeywordIndex
from memoweave.memory import Memory
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder

from .conftest import MakeMemory

WAIT = 10.0  # seconds: a bound for an event that must happen; never reached when green
WORKER = "memoweave-overlap"


def workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(WORKER)]


@pytest.fixture
def keyword_threads(monkeypatch) -> tuple[list[str], threading.Event]:
    """The threads KeywordIndex.scores ran in; an event set when it starts."""
    names: list[str] = []
    started = threading.Event()
    original = KeywordIndex.scores

    def scores(self: KeywordIndex, *args: Any, **kwargs: Any) -> Any:
        names.append(threading.current_thread().name)
        started.set()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(KeywordIndex, "scores", scores)
    return names, started


class WaitingEmbedder(HashingEmbedder):
    """Embeds a query only once the keyword ranking has started (in another thread)."""

    def __init__(self, started: threading.Event) -> None:
        super().__init__(dims=64)
        self.started = started

    def embed(self, texts: Sequence[str], *, purpose: str = "document") -> list[list[float]]:
        if purpose == "query":
            assert self.started.wait(WAIT), "the keyword ranking did not run meanwhile"
        return super().embed(texts, purpose=purpose)


def test_memory_ranks_keywords_in_its_worker_while_the_query_is_embedded(
    make_memory: MakeMemory, keyword_threads: tuple[list[str], threading.Event], api: str
) -> None:
    names, started = keyword_threads
    mem = make_memory(embedder=WaitingEmbedder(started))
    mem.add("Quetzalcoatl is my iguana.", user_id="alice", infer=False)
    for query in ("quetzalcoatl", "iguana"):
        started.clear()
        hits = mem.search(query, user_id="alice")
        assert hits["results"][0]["memory"] == "Quetzalcoatl is my iguana."
    if api == "sync":  # one long-lived worker, not a thread per search
        assert len(names) == 2 and all(n.startswith(WORKER) for n in names)
        assert len({n for n in names}) == 1


def test_a_keyword_failure_in_the_worker_is_the_same_typed_error(
    make_memory: MakeMemory, monkeypatch
) -> None:
    mem = make_memory()
    mem.add("I like green tea.", user_id="alice", infer=False)
    error = HistoryError("history database error: disk I/O error", hint="Check the disk.")

    def scores(self: KeywordIndex, *args: Any, **kwargs: Any) -> Any:
        raise error

    with monkeypatch.context() as patch:
        patch.setattr(KeywordIndex, "scores", scores)
        with pytest.raises(HistoryError) as raised:
            mem.search("tea", user_id="alice")
    assert raised.value is error and raised.value.hint == "Check the disk."
    assert mem.search("tea", user_id="alice")["results"][0]["memory"] == "I like green tea."


def test_an_embedding_failure_waits_for_the_keyword_ranking_and_is_raised(
    make_memory: MakeMemory, keyword_threads: tuple[list[str], threading.Event]
) -> None:
    names, started = keyword_threads

    class FailingEmbedder(HashingEmbedder):
        def embed(self, texts: Sequence[str], *, purpose: str = "document") -> list[list[float]]:
            if purpose == "query":
                raise EmbeddingError("the embedding server answered 503", hint="Retry later.")
            return super().embed(texts, purpose=purpose)

    mem = make_memory(embedder=FailingEmbedder(dims=64))
    mem.add("I like green tea.", user_id="alice", infer=False)
    with pytest.raises(EmbeddingError, match="503"):
        mem.search("tea", user_id="alice")
    assert started.is_set() or names == []  # started beside it, or cancelled before (async)


def test_close_stops_the_search_worker(make_memory: MakeMemory, api: str) -> None:
    before = set(workers())
    mem = make_memory()
    mem.add("I like green tea.", user_id="alice", infer=False)
    mem.search("tea", user_id="alice")
    started = set(workers()) - before
    assert len(started) == (1 if api == "sync" else 0)  # AsyncMemory overlaps as tasks
    mem.close()
    assert not (set(workers()) - before)


def test_a_memory_dropped_unclosed_leaves_no_search_worker(tmp_path: Path) -> None:
    before = set(workers())
    mem = Memory(
        {"history_db_path": str(tmp_path / "h.db")},
        embedder=HashingEmbedder(dims=64),
        vector_store=InMemoryVectorStore(),
    )
    mem.add("I like green tea.", user_id="alice", infer=False)
    mem.search("tea", user_id="alice")
    started = set(workers()) - before
    assert len(started) == 1
    del mem
    gc.collect()
    for thread in started:
        thread.join(WAIT)
    assert not (set(workers()) - before)
