"""The answer check: does the first reranked fact address every thing the question asks?

A cross-encoder reads topic match as an answer: "What is Tomás's favourite film?" scores
"Tomás's favourite band is Radiohead" 0.97, so the score of the first result cannot tell
a question that nothing answers from one that the first fact answers. The check asks the
reranker again with each content word of the query that the fact lacks (no shared
lemma) left out: a word whose removal *raises* the score is one the fact does not
address ("film": the fact is about a band), while a paraphrased word ("afraid" for
"terrified") lowers it when removed. The check's value is the sum over words of
``min(0, logit p - logit p_without_word)`` in reranker logits: 0 when every word counts
for the fact, more negative the more words count against it, and by how much.

It calibrates rather than ranks: the value shifts the logit of every result of the
search by ``weight * value`` (:attr:`.profiles.RerankStage.answer_check`), so the order
is kept and a question whose best fact misses what it asks scores lower throughout (and
with a ``threshold`` returns nothing). As a ranking feature it is too noisy: a correct
answer often has a word that counts slightly against it. The weight was chosen on the
fact-QA dev personas and checked on the held-out ones (docs/retrieval.md, "The answer
check"). It costs one reranker pair per missing word (at most :data:`MAX_WORDS`), all
asked in one ``score_pairs`` call.
"""

from __future__ import annotations

import math
import re

from memoweave.index.tokenize import STOP_WORDS, tokenize
from memoweave.retrieval.fusion import sigmoid

MAX_WORDS = 6
"""The most query words checked (the first ones the fact lacks); queries are short."""
MIN_WORD_CHARS = 3
_WORD = re.compile(r"[\w']+")


def ablated_queries(query: str, memory: str) -> list[str]:
    """The query once without each of its content words (not a stop word, at least
    :data:`MIN_WORD_CHARS` long) that shares no lemma with ``memory``, in order, at most
    :data:`MAX_WORDS`. Linear in the two texts."""
    lemmas = set(tokenize(memory))
    words = _WORD.findall(query)
    out: list[str] = []
    for i, word in enumerate(words):
        if len(out) == MAX_WORDS:
            break
        if len(word) < MIN_WORD_CHARS or word.lower() in STOP_WORDS:
            continue
        if set(tokenize(word)) & lemmas:
            continue
        out.append(" ".join(words[:i] + words[i + 1 :]) + "?")
    return out


def _logit(p: float) -> float:
    p = min(1.0 - 1e-9, max(1e-9, p))
    return math.log(p / (1.0 - p))


def check_value(score: float, without: list[float]) -> float:
    """The sum of ``min(0, logit score - logit s)`` over the scores ``without`` each word:
    every word the fact does not address counts (a second one is more evidence that the
    fact is not the answer, which the largest rise alone would ignore)."""
    base = _logit(score)
    return sum(min(0.0, base - _logit(s)) for s in without)


def shifted(score: float, shift: float) -> float:
    """``score`` (a probability) with ``shift`` added to its logit."""
    return sigmoid(_logit(score) + shift)
