"""A small incremental BM25 index (Okapi BM25, k1=1.2, b=0.75) for the in-memory store.

Tokens are lowercase (``casefold``) runs of letters and digits; CJK ideographs and kana
count one token per character, since those scripts do not separate words by spaces.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from collections.abc import Callable, Hashable

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")


def tokenize(text: str) -> list[str]:
    """The BM25 tokens of ``text``."""
    return _TOKEN_RE.findall(text.casefold())


class BM25Index:
    """Documents keyed by any hashable key; :meth:`add` replaces a key's previous text."""

    def __init__(self, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self._postings: dict[str, dict[Hashable, int]] = {}
        self._lengths: dict[Hashable, int] = {}
        self._terms: dict[Hashable, tuple[str, ...]] = {}
        self._total = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, key: Hashable, text: str) -> None:
        """Index ``text`` under ``key`` (an empty token list just removes the key)."""
        self.remove(key)
        tokens = tokenize(text)
        if not tokens:
            return
        counts = Counter(tokens)
        for term, tf in counts.items():
            self._postings.setdefault(term, {})[key] = tf
        self._terms[key] = tuple(counts)
        self._lengths[key] = len(tokens)
        self._total += len(tokens)

    def remove(self, key: Hashable) -> None:
        """Forget ``key``; unknown keys are ignored."""
        length = self._lengths.pop(key, None)
        if length is None:
            return
        self._total -= length
        for term in self._terms.pop(key):
            post = self._postings[term]
            del post[key]
            if not post:
                del self._postings[term]

    def search(
        self, text: str, top_k: int, accept: Callable[[Hashable], bool]
    ) -> list[tuple[Hashable, float]]:
        """The ``top_k`` accepted keys sharing a term with ``text``, best BM25 score first."""
        n = len(self._lengths)
        if n == 0:
            return []
        avgdl = self._total / n
        scores: dict[Hashable, float] = {}
        for term in set(tokenize(text)):
            post = self._postings.get(term)
            if not post:
                continue
            df = len(post)
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            for key, tf in post.items():
                norm = tf + self.k1 * (1.0 - self.b + self.b * self._lengths[key] / avgdl)
                scores[key] = scores.get(key, 0.0) + idf * tf * (self.k1 + 1.0) / norm
        hits = [(key, score) for key, score in scores.items() if accept(key)]
        return heapq.nsmallest(top_k, hits, key=lambda item: (-item[1], str(item[0])))
