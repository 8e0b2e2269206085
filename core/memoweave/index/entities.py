"""Entity extraction for the entity signal, with rules only (no downloaded model).

An entity is a normalised key (lowercase, possessive ``'s`` dropped, inner whitespace
collapsed) for one of:

- a quoted title: text between straight or curly double quotes (2-80 characters);
- a name: a run of capitalised words ("New York", "Dr. Seuss", "LGBTQ"). A capitalised
  word at the start of a sentence counts only when it is not a function word, a question
  word or a common interjection ("The", "When", "Wow"), so questions and memories agree;
  each word of a multi-word name is an entity too, so "Caroline" matches "Caroline Smith";
- a number of two or more digits, ordinals included ("18th" -> "18", "2022");
- a date written with a month name ("May 2023", "8 May" -> "may 2023", "may").

Chinese and Japanese text has no capitalisation; runs of CJK characters are left to the
keyword signal's bigrams.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from itertools import chain

from memoweave.index.tokenize import STOP_WORDS

MAX_ENTITIES = 64
MONTHS: tuple[str, ...] = (
    "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december",
)  # fmt: skip
_SENTENCE_STARTERS: frozenset[str] = STOP_WORDS | frozenset(
    "how whose not no yes yeah yep nope oh ah hey hi hello wow thanks thank ok okay sure "
    "great good nice cool awesome well hmm haha lol please sorry oops aw aww yay any all "
    "some each every many much more most other another such only own same both few "
    "is was am being let lets let's here now today tomorrow yesterday tonight maybe "
    "definitely absolutely totally honestly anyway plus though although because since "
    "while after before until unless once as like love glad happy congrats "
    "congratulations wish hope guess think know see look mine ours even still "
    "i'm i've i'd i'll it's that's there's what's you're we're they're don't didn't "
    "can't won't isn't wasn't".split()
)
_QUOTED = re.compile(r"[\"“”]([^\"“”\n]{2,80})[\"“”]")
_WORD = re.compile(r"[^\W\d_][\w'’.-]*", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.])(\d{2,})(?:st|nd|rd|th|s)?\b")
_MONTH_DATE = re.compile(
    r"\b(?:(\d{1,2})(?:st|nd|rd|th)?\s+)?("
    + "|".join(MONTHS)
    + r")\b(?:\s+(\d{1,2})(?:st|nd|rd|th)?)?,?(?:\s+(\d{4}))?",
    re.IGNORECASE,
)
_SENTENCE_PUNCTUATION = frozenset(".!?:;")
_CONNECTORS = frozenset({"of", "de", "van", "von", "da", "del", "la", "le", "&"})


def normalize_entity(text: str) -> str:
    """The entity key of a name written anywhere (an LLM's answer, a speaker's name):
    lowercase, curly apostrophe and possessive ``'s`` dropped, whitespace collapsed, as the
    keys :func:`extract_entities` returns."""
    text = text.replace("’", "'").strip(" .,'-").lower()
    if text.endswith("'s"):
        text = text[:-2]
    return " ".join(text.split())


_norm = normalize_entity


def _is_capitalised(word: str) -> bool:
    return word[:1].isupper()


def _starts_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens a sentence: only whitespace before it, or a
    line break or sentence punctuation then whitespace. Reads back over the whitespace
    before the word only, so all the words of a text cost linear time together."""
    i = start - 1
    while i >= 0 and text[i].isspace():
        if text[i] == "\n":
            return True
        i -= 1
    return i < 0 or text[i] in _SENTENCE_PUNCTUATION


def _names(text: str) -> Iterator[str]:
    """Runs of capitalised words (see the module docstring), lazily in text order."""
    run: list[str] = []
    pending: list[str] = []

    def flush() -> list[str]:
        found = []
        if run:
            found.append(" ".join(run))
            if len(run) > 1:
                found.extend(w for w in run if w not in _CONNECTORS)
        run.clear()
        pending.clear()
        return found

    for match in _WORD.finditer(text):
        word = match.group().rstrip(".'’-")
        if not word:
            continue
        starts_sentence = _starts_sentence(text, match.start())
        gap = text[match.start() - 1] if match.start() else " "
        if run and gap not in " -":
            yield from flush()
        if _is_capitalised(word):
            key = _norm(word)
            if len(key) < 2 or (starts_sentence and key in _SENTENCE_STARTERS):
                yield from flush()
                continue
            run.extend(pending)
            pending.clear()
            run.append(key)
        elif run and word.lower() in _CONNECTORS:
            pending.append(word.lower())
        else:
            yield from flush()
        if match.group().endswith(("'s", "’s")):
            yield from flush()  # "Caroline's friend": the name ends at the possessive
    yield from flush()


def _dates(text: str) -> Iterator[str]:
    for match in _MONTH_DATE.finditer(text):
        month = match.group(2).lower()
        alone = not (match.group(1) or match.group(3) or match.group(4))
        if month == "may" and alone and not match.group(2)[0].isupper():
            continue  # the verb "may"
        yield month
        if match.group(4):
            yield f"{month} {match.group(4)}"


def extract_entities(text: str) -> tuple[str, ...]:
    """The entity keys of ``text``, deduplicated in order of appearance (at most 64), in
    time linear in ``len(text)``. Short texts (queries, typical memories) are cached."""
    if not isinstance(text, str) or not text.strip():
        return ()
    return _cached(text) if len(text) <= _CACHED_CHARS else _extract(text)


_CACHED_CHARS = 2_000


@lru_cache(maxsize=4096)
def _cached(text: str) -> tuple[str, ...]:
    return _extract(text)


def _extract(text: str) -> tuple[str, ...]:
    """Quoted titles, then names, numbers and dates, each in text order; the scan stops
    as soon as :data:`MAX_ENTITIES` distinct keys are found."""
    keys = chain(
        (_norm(m.group(1)) for m in _QUOTED.finditer(text)),
        _names(text),
        (m.group(1).lstrip("0") or "0" for m in _NUMBER.finditer(text)),
        _dates(text),
    )
    unique: dict[str, None] = {}
    for key in keys:
        if key and len(key) <= 80:
            unique[key] = None
            if len(unique) == MAX_ENTITIES:
                break
    return tuple(unique)
