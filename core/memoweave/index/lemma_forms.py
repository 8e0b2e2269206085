"""Query words the keyword index never saw, scored without loading the lemma dictionary.

A query word's lemma changes BM25 scores only through which tokens the query has: a token
no memory holds adds only its (maximal) IDF to the query's ceiling, whatever its text, so
the lemma of a word no memory holds matters only when it is a lemma the index holds or
the lemma of another query word. When the index is written (the dictionary is loaded for
it anyway), every lemma ``L`` written to ``keyword_lemmas`` also gets the dictionary's
other forms of ``L`` and ``L`` itself, each with its own lemma (closed: the lemmas of those
forms get their forms too). A word missing from that table then has a lemma that is
either a dictionary lemma the index does not hold, or (for words not in the dictionary)
what simplemma's dictionary-free steps give, :func:`rule_lemma`; if that is not a word the
table holds either, the word's token is held by no memory and, as the query's only such
word, equals no other query token: a stand-in token scores it exactly.

Only for the simplemma version whose English pipeline :func:`rule_lemma` reproduces for
the words :mod:`.tokenize` makes (lowercase letters and digits: no apostrophe, hyphen or
clitic step applies; English has no affix, prefix or morpheme step without ``greedy``); any
other lemmatizer loads the dictionary for such words as before.
"""

from __future__ import annotations

import sqlite3
import unicodedata
import zlib
from array import array
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate

from memoweave.index.scope_cache import chunks
from memoweave.index.tokenize import lemmas, lemmatizer_id

EMULATED = "simplemma 2.0.0 en"
"""The lemmatizer id :func:`rule_lemma` reproduces (checked against simplemma in tests)."""
_IES_ENDING = ("cies",)
_S_ENDING = ("doms", "isms", "ists", "ments", "nces", "ships", "tions", "ums")


def _marker(lemmatizer: str) -> str:
    return f"keyword_forms {lemmatizer}"


def rule_lemma(word: str) -> str:
    """The lemma simplemma 2.0.0 gives a lowercase English ``word`` that is not in its
    dictionary (its ``apply_en`` rules, numbers kept, else the word)."""
    if word.isnumeric():
        return word
    if len(word) > 7 and word.endswith(_IES_ENDING):
        return word[:-3] + "y"
    if word.endswith(_S_ENDING):
        return word[:-1]
    if word.endswith("ized"):
        return word[:-4] + "ize"
    if word.endswith("erves"):
        return word[:-1]
    return word


class _Forms:
    """Lowercased lemma -> the dictionary keys with that lemma, for simplemma's 76k
    English lemmas in ~3 MiB (a dict of tuples took ~20 MiB, ~35 resident): one UTF-8
    line per lemma, sorted (UTF-8 bytes sort as the code points do),
    ``lemma<US>key<US>key...<RS>``, and where each line starts. Entries holding either
    separator (none in simplemma 2.0.0) would be kept in a dict instead."""

    def __init__(self, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        by_value: defaultdict[bytes, list[bytes]] = defaultdict(list)
        for key, value in pairs:  # grouped undecoded first: each value decoded once
            by_value[value].append(key)
        grouped: defaultdict[bytes, list[bytes]] = defaultdict(list)
        for value, keys in by_value.items():
            grouped[value.decode().lower().encode()].extend(keys)
        del by_value
        lines = [_US_BYTE.join((lemma, *keys)) for lemma, keys in sorted(grouped.items())]
        self._starts = array("I", accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
        self._text = _RS_BYTE.join(lines)
        self._dict: dict[str, tuple[str, ...]] | None = None
        keys_total = sum(len(keys) for keys in grouped.values())
        if self._text.count(_US_BYTE) != keys_total or self._text.count(_RS_BYTE) != len(lines) - 1:
            self._dict = {
                lemma.decode(): tuple(key.decode() for key in keys)
                for lemma, keys in grouped.items()
            }
            self._starts, self._text = array("I"), b""

    @classmethod
    def from_parts(cls, starts: bytes, text: bytes) -> _Forms | None:
        """The forms :meth:`parts` gave, or ``None`` when they are not such parts."""
        lines = array("I")
        if not text or len(starts) % lines.itemsize:
            return None
        lines.frombytes(starts)
        if not lines or lines[0] != 0 or lines[-1] >= len(text):
            return None
        if text.count(_RS_BYTE) != len(lines) - 1:
            return None
        forms = cls.__new__(cls)
        forms._starts, forms._text, forms._dict = lines, text, None
        return forms

    def parts(self) -> tuple[bytes, bytes] | None:
        """The line starts and the text, to store and rebuild with :meth:`from_parts`
        (``None`` for the dict fallback)."""
        if self._dict is not None:
            return None
        return self._starts.tobytes(), self._text

    def _lemma_at(self, line: int) -> bytes:
        start = self._starts[line]
        return self._text[start : self._text.index(_US_BYTE, start)]

    def get(self, lemma: str) -> tuple[str, ...]:
        """The keys whose lemma lowercases to ``lemma`` (none if it is no lemma)."""
        if self._dict is not None:
            return self._dict.get(lemma, ())
        wanted = lemma.encode()
        line = bisect_left(range(len(self._starts)), wanted, key=self._lemma_at)
        if line == len(self._starts) or self._lemma_at(line) != wanted:
            return ()
        start = self._starts[line]
        end = self._text.find(_RS_BYTE, start)
        return tuple(self._text[start : None if end < 0 else end].decode().split(_US)[1:])


_US, _RS = "\x1f", "\x1e"
_US_BYTE, _RS_BYTE = _US.encode(), _RS.encode()


FORMS_LAYOUT = 1
"""The layout of the forms kept in ``keyword_forms`` (:meth:`_Forms.parts`, zlib)."""
_held: dict[str, _Forms] = {}


def _forms(conn: sqlite3.Connection, lemmatizer: str) -> _Forms:
    """The dictionary's forms of each lemma: those this process holds, else those the home
    keeps in ``keyword_forms`` (~10 ms to read), else grouped from the dictionary
    (~0.25 s). Inside the caller's write transaction, a home that keeps none (or a row
    that does not read back) gets them."""
    key = (lemmatizer, FORMS_LAYOUT)
    where = "FROM keyword_forms WHERE lemmatizer = ? AND layout = ?"
    forms = _held.get(lemmatizer)
    if forms is not None:
        if conn.execute(f"SELECT 1 {where}", key).fetchone() is not None:
            return forms
    elif (row := conn.execute(f"SELECT starts, text {where}", key).fetchone()) is not None:
        try:
            forms = _Forms.from_parts(zlib.decompress(row[0]), zlib.decompress(row[1]))
        except (zlib.error, TypeError):
            forms = None
        if forms is not None:
            _held[lemmatizer] = forms
            return forms
    if forms is None:
        forms = _held[lemmatizer] = _dictionary_forms()
    if (parts := forms.parts()) is not None:
        conn.execute(
            "INSERT OR REPLACE INTO keyword_forms(lemmatizer, layout, starts, text) "
            "VALUES (?, ?, ?, ?)",
            (lemmatizer, FORMS_LAYOUT, *(zlib.compress(part, 1) for part in parts)),
        )
    return forms


def _dictionary_forms() -> _Forms:
    """The dictionary's forms of each lemma, grouped again on each call (loads it; ~0.25
    s): :func:`_forms` holds the result, so a process groups them at most once."""
    from simplemma.strategies.dictionaries import LOW_MEMORY_DICTIONARY_FACTORY

    return _Forms(_entries(LOW_MEMORY_DICTIONARY_FACTORY.get_dictionary("en")))


def _entries(dictionary: Mapping[str, str]) -> Iterator[tuple[bytes, bytes]]:
    """(key, value) of a simplemma dictionary, UTF-8. simplemma 2.0's ``low_memory``
    store is read as its front-coded records in one pass (looking each key up again would
    decode its block once per key)."""
    data, start, rev = (getattr(dictionary, name, None) for name in ("_data", "_pos", "_rev"))
    if not isinstance(data, bytes) or not isinstance(start, int):
        yield from ((key.encode(), value.encode()) for key, value in dictionary.items())
        return
    from simplemma.strategies.dictionaries import frontcode

    for _, key, value in frontcode._iter_records(data, start):
        yield (key[::-1], value[::-1]) if rev else (key, value)


def with_forms(conn: sqlite3.Connection, lemmatizer: str, known: dict[str, str]) -> None:
    """Inside the indexing transaction: add to ``known`` (word -> lemma, about to be
    written) every form of its lemmas and, once per home, of those the table already
    holds (see the module docstring); nothing for a lemmatizer :func:`rule_lemma` does not
    reproduce. Lemmas of words the table holds have their forms: the dictionary's forms
    are read (:func:`_forms`) only when a new word comes."""
    if lemmatizer != EMULATED:
        return
    stored = {w for chunk in chunks(list(known)) for w, _ in _rows(conn, lemmatizer, chunk)}
    pending = {lemma for word, lemma in known.items() if word not in stored}  # others have theirs
    marker = _marker(lemmatizer)
    if conn.execute("SELECT 1 FROM index_meta WHERE name = ?", (marker,)).fetchone() is None:
        pending.update(
            row[0]
            for row in conn.execute(
                "SELECT DISTINCT lemma FROM keyword_lemmas WHERE lemmatizer = ?", (lemmatizer,)
            )
        )
        conn.execute("INSERT INTO index_meta(name, version) VALUES (?, 1)", (marker,))
    if not pending:
        return
    forms = _forms(conn, lemmatizer)
    expanded: set[str] = set()
    while pending:
        lemma = pending.pop()
        expanded.add(lemma)
        words = {lemma, *(key.lower() for key in forms.get(lemma))}
        new = [w for w in words if w not in known]
        for word, its_lemma in lemmas(new)[1].items():
            known[word] = its_lemma
            if its_lemma not in expanded:
                pending.add(its_lemma)


def known_lemmas(conn: sqlite3.Connection, words: Sequence[str], limit: int) -> dict[str, str]:
    """The lemmas of the first ``limit`` of ``words`` that the index has seen (by
    :func:`lemmatizer_id`), and a stand-in token for the one word of ``words`` it has
    not, when that scores exactly the same."""
    lemmatizer = lemmatizer_id()
    found = dict(_rows(conn, lemmatizer, list(words[:limit])))
    unknown = [w for w in words if w not in found]
    if len(unknown) != 1 or len(words) > limit or lemmatizer != EMULATED:
        return found
    word = unknown[0]
    plain = word == unicodedata.normalize("NFC", word) == word.capitalize().lower()
    if not plain or not _has_forms(conn, lemmatizer):
        return found
    rule = rule_lemma(word)
    if rule == word or not _rows(conn, lemmatizer, [rule]):
        found[word] = " " + word  # no memory holds it: tokens never contain a space
    return found


def _rows(conn: sqlite3.Connection, lemmatizer: str, words: list[str]) -> list[tuple[str, str]]:
    if not words:
        return []
    return conn.execute(
        "SELECT word, lemma FROM keyword_lemmas WHERE lemmatizer = ? AND word IN "
        f"({', '.join('?' * len(words))})",
        [lemmatizer, *words],
    ).fetchall()


def _has_forms(conn: sqlite3.Connection, lemmatizer: str) -> bool:
    row = conn.execute("SELECT 1 FROM index_meta WHERE name = ?", (_marker(lemmatizer),))
    return row.fetchone() is not None
