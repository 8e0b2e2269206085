"""Tokenisation for keyword (BM25) search.

Latin-script text: lowercased word tokens, reduced to a lemma with ``simplemma`` when it
is installed (pure Python, English by default), else a light suffix stripper; stop words
dropped. Chinese, Japanese and Korean text has no spaces: each run of CJK characters
becomes its overlapping character bigrams (and the single character for a run of one).

The dictionary is simplemma's ``low_memory`` store (the same entries and lemmas, kept as
its front-coded stream with an index of restart points: ~3 MiB instead of the ~20 of a
dict). Loading it costs ~0.15-0.6 s, so a query need not: :func:`tokenize`
takes the lemmas already known (the keyword index keeps every word it indexed with its
lemma, under :func:`lemmatizer_id`, and the stand-ins of :mod:`.lemma_forms`), and loads
the dictionary only for another word.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache

from memoweave.distributions import installed_version

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
STOP_WORDS: frozenset[str] = frozenset(
    "a an and are as at be been but by did do does for from had has have he her hers him his how "
    "i if in into is it its me my of on or our she so than that the their them then there "
    "these they this to was we were what when where which who whom why will with you your "
    "yours about would could should can just also very really".split()
)


def _strip_suffix(word: str) -> str:
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + keep
    return word


_LOADING = threading.Lock()


_SUFFIX_ID = "suffix-1"


@lru_cache(maxsize=1)
def lemmatizer_id() -> str:
    """Which lemmatizer :func:`tokenize` uses, without loading it: ``simplemma <version>
    en`` when simplemma is installed, else the suffix stripper's id."""
    if importlib.util.find_spec("simplemma") is None:
        return _SUFFIX_ID
    try:
        return f"simplemma {installed_version('simplemma')} en"
    except importlib.metadata.PackageNotFoundError:
        return "simplemma en"


@lru_cache(maxsize=1)
def _lemmatizer() -> tuple[str, Callable[[str], str]]:
    """The loaded lemmatizer and its id (the suffix stripper's if simplemma fails)."""
    with _LOADING:  # one dictionary load, even when preload() runs it on another thread
        try:
            import simplemma
        except ImportError:
            return _SUFFIX_ID, _strip_suffix
        simplemma.lemmatize("loading", lang="en", low_memory=True)  # reads the dictionary
    return lemmatizer_id(), lambda word: str(
        simplemma.lemmatize(word, lang="en", low_memory=True)
    ).lower()


def preload() -> None:
    """Load the lemma dictionary on a daemon thread, so the first query does not wait
    for it (it overlaps the embedding model's load when a ``Memory`` opens)."""
    if _lemmatizer.cache_info().currsize == 0 and not _LOADING.locked():
        threading.Thread(target=_lemmatizer, daemon=True).start()


@lru_cache(maxsize=65536)
def _lemma(word: str) -> str:
    return _lemmatizer()[1](word)


def lemmas(words: Iterator[str] | list[str] | set[str]) -> tuple[str, dict[str, str]]:
    """The loaded lemmatizer's id and the lemma of each of ``words`` (loads it)."""
    return _lemmatizer()[0], {word: _lemma(word) for word in words}


def _pieces(text: str) -> Iterator[tuple[bool, str]]:
    """(needs a lemma, token or word) of ``text``, in order."""
    for match in _WORD.finditer(text.lower()):
        word = match.group()
        if _CJK.search(word):
            for run in _CJK.findall(word):
                yield from ((False, run[i : i + 2]) for i in range(max(1, len(run) - 1)))
            for rest in _CJK.split(word):
                if rest and rest not in STOP_WORDS:
                    yield True, rest
        elif word not in STOP_WORDS:
            yield True, word


def lemma_words(text: str) -> set[str]:
    """The words of ``text`` that :func:`tokenize` reduces to a lemma."""
    return {piece for needs, piece in _pieces(text) if needs}


def tokenize(text: str, known: Mapping[str, str] | None = None) -> list[str]:
    """The keyword tokens of ``text`` (lemmas and CJK bigrams), in order; ``known`` maps
    words to their lemmas by :func:`lemmatizer_id` (the others are lemmatized here)."""
    known = known or {}
    return [
        (known[piece] if piece in known else _lemma(piece)) if needs else piece
        for needs, piece in _pieces(text)
    ]
