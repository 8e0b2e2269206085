"""Tokenisation for keyword (BM25) search.

Latin-script text: lowercased word tokens, reduced to a lemma with ``simplemma`` when it
is installed (pure Python, English by default), else a light suffix stripper; stop words
dropped. Chinese, Japanese and Korean text has no spaces: each run of CJK characters
becomes its overlapping character bigrams (and the single character for a run of one).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from functools import lru_cache

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


@lru_cache(maxsize=1)
def _lemmatizer() -> Callable[[str], str]:
    with _LOADING:  # one dictionary load, even when preload() runs it on another thread
        try:
            import simplemma
        except ImportError:
            return _strip_suffix
        simplemma.lemmatize("loading", lang="en")  # reads the English dictionary (~0.5 s)
    return lambda word: str(simplemma.lemmatize(word, lang="en")).lower()


def preload() -> None:
    """Load the lemma dictionary on a daemon thread, so the first query does not wait
    for it (it overlaps the embedding model's load when a ``Memory`` opens)."""
    if _lemmatizer.cache_info().currsize == 0 and not _LOADING.locked():
        threading.Thread(target=_lemmatizer, daemon=True).start()


@lru_cache(maxsize=65536)
def _lemma(word: str) -> str:
    return _lemmatizer()(word)


def tokenize(text: str) -> list[str]:
    """The keyword tokens of ``text`` (lemmas and CJK bigrams), in order."""
    tokens: list[str] = []
    for match in _WORD.finditer(text.lower()):
        word = match.group()
        if _CJK.search(word):
            for run in _CJK.findall(word):
                tokens.extend(run[i : i + 2] for i in range(max(1, len(run) - 1)))
            for rest in _CJK.split(word):
                if rest and rest not in STOP_WORDS:
                    tokens.append(_lemma(rest))
        elif word not in STOP_WORDS:
            tokens.append(_lemma(word))
    return tokens
