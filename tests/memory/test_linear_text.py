"""Every per-text step is linear in the text (issue 9, item 4): relative bounds measured in
the same test, never absolute times. Times are CPU times (``thread_time`` for the pure
functions, ``process_time`` through ``Memory``), so a loaded machine does not stretch one
measurement and not the other."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memoweave import ValidationError
from memoweave.index.entities import extract_entities
from memoweave.index.tokenize import tokenize
from memoweave.memory import Memory
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder

_WORDS = (
    'Caroline went to New York with Dr. Seuss on 8 May 2023. The LGBTQ group met at "Moby '
    'Dick" club when she said hi; 北京烤鸭 and 18th birthdays\n'
).split(" ")


def _text(chars: int, seed: int) -> str:
    rng = random.Random(seed)
    words: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:chars]


def _best_time(fn: Callable[[str], object], chars: int, runs: int = 3) -> float:
    """The fastest of ``runs`` calls, each on a different text (no result cache helps)."""
    best = float("inf")
    for seed in range(runs):
        text = _text(chars, seed)
        start = time.thread_time()
        fn(text)
        best = min(best, time.thread_time() - start)
    return best


def _assert_linear(fn: Callable[[str], object]) -> None:
    """40x the text may cost at most 200x the time (quadratic would be 1600x)."""
    fn(_text(5_000, seed=99))  # warm the lemma cache and regexes
    ratio = _best_time(fn, 200_000) / max(_best_time(fn, 5_000), 1e-4)
    assert ratio < 200, f"200 KB took {ratio:.0f}x the time of 5 KB"


def test_entity_extraction_is_linear() -> None:
    _assert_linear(extract_entities)


def test_tokenisation_is_linear() -> None:
    _assert_linear(tokenize)


def test_linear_rewrite_finds_the_same_entities() -> None:
    text = 'Caroline Smith met Bob. Wow, the "Big Apple" in May 2023!\nWhen did the 18th end'
    assert extract_entities(text) == (
        "big apple", "caroline smith", "caroline", "smith", "bob", "big", "apple", "may",
        "2023", "18",
    )  # fmt: skip
    assert "when" not in extract_entities("x.\n   When Caroline came")
    assert extract_entities("   The Eiffel Tower") == ("eiffel tower", "eiffel", "tower")


def test_add_and_update_of_one_megabyte_take_linear_time(tmp_path: Path) -> None:
    """Through every core step (validation, entity links, BM25 postings, history, journal):
    1 MB within 40x of 100 KB (10x the text; quadratic would be 100x). Beyond
    ``limits.max_text_chars`` (default 200,000) the same call is refused at once."""

    def memory(db: str, **config: object) -> Memory:
        config["history_db_path"] = str(tmp_path / db)
        return Memory(config, embedder=HashingEmbedder(dims=64), vector_store=InMemoryVectorStore())

    with memory("a.db") as default, pytest.raises(ValidationError, match="the limit is 200000"):
        default.add(_text(1_000_000, 0), user_id="u", infer=False)
    with memory("b.db", limits={"max_text_chars": 2_000_000}) as mem:
        mem.add("warm the caches", user_id="u", infer=False)

        def add_then_update(chars: int, seed: int) -> tuple[float, float]:
            text = _text(chars, seed)
            start = time.process_time()
            memory_id = mem.add(text, user_id="u", infer=False)["results"][0]["id"]
            added = time.process_time()
            mem.update(memory_id, text[::-1])
            return added - start, time.process_time() - added

        small = [add_then_update(100_000, seed) for seed in (1, 2)]
        small_add, small_update = min(s[0] for s in small), min(s[1] for s in small)
        large_add, large_update = add_then_update(1_000_000, 3)
        assert large_add < 40 * small_add, (large_add, small_add)
        assert large_update < 40 * small_update, (large_update, small_update)
        assert mem.search("Caroline", user_id="u")["results"]
