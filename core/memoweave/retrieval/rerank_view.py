"""What a reranker reads for a first-person question: the user as a third person.

A cross-encoder trained on web search (MS MARCO) scores how well a passage answers a
question about its subject. Memories of one user are often written without one ("Works as
a nurse at Leeds General Infirmary", the shape extraction stores) or about "her" / "my",
and the user's questions say "my" / "I" ("What's my job?"), so the model sees no subject
in common and scores answer and non-answer alike near 0, while a scope of named facts
("Kwame is head chef ...") asked about by name ("What does Kwame do?") scores near 1: one
threshold cannot serve both (docs/retrieval.md, "Reranking").

When the query speaks in the first person (English: "I", "my", "me", ...),
:func:`rerank_view` hands the reranker the query and the fact memories rewritten about
"the user" ("What's the user's job?" / "The user works as a nurse at ..."): every
first-person or leading third-person pronoun becomes "the user" / "the user's", and a fact
with no subject gets one that fits its first word: "The user" before a verb, "The user is"
before a participle, "The user's" before a noun ("Name is Alex", mem0's shape). A fact
that starts with a name (a capitalised word found capitalised past the start of the query
or of another candidate, or a capitalised possessive: "Kwame's restaurant ...") keeps it.
Only the reranker's input changes: results carry the memories as stored. A query without
first-person words, chat turns (``turn`` memories, said by a named speaker) and text in
other languages are passed unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

USER = "the user"
_TRIGGER = re.compile(r"\bI\b|\b(?:my|me|mine|myself)\b", re.IGNORECASE)
# query rewrites, in order (verb agreement for the commonest auxiliaries)
_QUERY_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), replacement)
    for pattern, replacement in (
        (r"\bam I\b", f"is {USER}"),
        (r"\bI am\b|\bI['’]m\b", f"{USER} is"),
        (r"\bI['’]ve\b", f"{USER} has"),
        (r"\bI['’]d\b", f"{USER} would"),
        (r"\bI['’]ll\b", f"{USER} will"),
        (r"\bdo I\b", f"does {USER}"),
        (r"\bhave I\b", f"has {USER}"),
        (r"\b(?:my|mine)\b", f"{USER}'s"),
        (r"\bmyself\b", USER),
        (r"\b(?:I|me)\b", USER),
    )
)
_LEADING = re.compile(r"^(?:(her|his|their|my)|(she|he|they|I))\b", re.IGNORECASE)
_INNER = re.compile(r"\b(?:(my)|(I|me))\b")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
# words that start a subject-less fact as its verb without ending in "s" / "ed" / "n't":
# auxiliaries and modals, common irregular past tenses, adverbs that precede a verb
_VERB_STARTS = frozenset(
    """
    am are be been can cannot could do had may might must shall should was were will
    would ate beat became began bent bit blew bore bought broke brought built caught chose
    came cut dealt did drank drew drove dug fed fell felt fled flew forgot fought found
    froze gave got grew hid held hit hung hurt kept knew laid led leant lent let lit lost
    made meant met paid put quit ran rang read rode rose sang sat saw sent set shook shot
    shut slept sold spent spoke stood stole struck stuck swam swore taught thought threw
    told took tore understood went woke won wore wrote also always already again almost
    just never not now often once only rarely recently seldom sometimes soon still
    """.split()
)
_LY_NOUNS = frozenset({"family", "daily", "early", "july", "italy", "belly", "ally", "lily"})


def first_person(query: str) -> bool:
    """Whether ``query`` speaks in the English first person ("I", "my", "me", ...)."""
    return _TRIGGER.search(query) is not None


def user_query(query: str) -> str:
    """``query`` with its first-person words about "the user"."""
    for pattern, replacement in _QUERY_RULES:
        query = pattern.sub(replacement, query)
    return query


def user_fact(text: str, names: frozenset[str]) -> str:
    """``text`` (a fact of the user's scope) about "the user": a leading pronoun replaced,
    "The user" put before a fact with no subject (``names``: capitalised words that are
    names here, kept as the subject), first-person words inside rewritten."""
    stripped = text.lstrip()
    if not stripped:
        return text
    lead = _LEADING.match(stripped)
    if lead is not None:
        subject = "The user's" if lead.group(1) else "The user"
        stripped = subject + stripped[lead.end() :]
    else:
        first = _WORD.match(stripped)
        word = _base(first.group(0)) if first is not None else ""
        named = word in names or (first is not None and first.group(0) != word)  # "Kwame's"
        if not (word and word[0].isupper() and named):
            stripped = _subject(word) + stripped[0].lower() + stripped[1:]
    return _INNER.sub(lambda m: f"{USER}'s" if m.group(1) else USER, stripped)


def _subject(word: str) -> str:
    """The subject put before a fact that starts with ``word`` and has none: "The user "
    before a verb ("Works as ...", "Grew up in ...", "Never drinks ..."), "The user is "
    before a participle ("Planning a trip ..."), "The user's " before anything else: a
    noun ("Name is Alex", "Favourite film is ...") or an adjective ("Allergic to ...",
    read as "the user is"). A word ending in "s" counts as a verb ("Parents live ..." stays
    "The user parents live ..."): most facts start with one."""
    lower = word.lower()
    if not lower or lower in _VERB_STARTS or lower.endswith(("ed", "n't")):
        return "The user "
    if lower.endswith("ing") and len(lower) > 4:
        return "The user is "
    if lower.endswith("s") and not lower.endswith("ss"):
        return "The user "
    if lower.endswith("ly") and lower not in _LY_NOUNS:
        return "The user "  # an adverb: "Usually works nights"
    return "The user's "


def names_in(texts: Sequence[str]) -> frozenset[str]:
    """Capitalised words found past the first word of any of ``texts`` (names, not the
    capital of a sentence's start); possessive "'s" dropped."""
    found: set[str] = set()
    for text in texts:
        words = _WORD.findall(text)
        found.update(_base(w) for w in words[1:] if w[0].isupper() and w != "I")
    return frozenset(found)


def rerank_view(query: str, texts: Sequence[str], facts: Sequence[bool]) -> tuple[str, list[str]]:
    """The query and texts a reranker reads (see the module docstring): unchanged unless
    ``query`` is in the first person; then the query and each text whose ``facts`` flag is
    set are rewritten about "the user"."""
    if not first_person(query):
        return query, list(texts)
    names = names_in([query, *texts])
    view = [user_fact(t, names) if fact else t for t, fact in zip(texts, facts, strict=True)]
    return user_query(query), view


def _base(word: str) -> str:
    for suffix in ("'s", "’s"):
        if word.endswith(suffix):
            return word[: -len(suffix)]
    return word
