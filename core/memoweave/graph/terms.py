"""Names in the graph and the offline extractor.

- :func:`entity_name` / :func:`relationship_name` normalise what an LLM (or a caller)
  writes into the graph's keys: entity names like the entity index's keys
  (:func:`memoweave.index.entities.normalize_entity`), relationships in lowercase
  ``snake_case``.
- :func:`graph_entities` keeps, of a text's rule-based entities, the names and titles:
  numbers and month dates are dropped (they would join every memory of a month into one
  hub) and so are the single words of a longer name ("york" of "new york").
- :func:`offline_triples` links them without an LLM: the speaker ``mentions`` each entity
  and every pair of entities is ``co_mentioned`` (at most :data:`MAX_LINKED` entities, so
  at most 28 pairs); linear in the text.
"""

from __future__ import annotations

import re

from memoweave.index.entities import MONTHS, extract_entities, normalize_entity
from memoweave.providers.graph_checks import MAX_LABEL, MAX_NAME

MAX_LINKED = 8
"""Entities of one text the offline extractor links."""
MENTIONS = "mentions"
CO_MENTIONED = "co_mentioned"
_MONTH_PREFIXES = tuple(f"{m} " for m in MONTHS)
_NOT_WORD = re.compile(r"[^\w]+")

Triple = tuple[str, str, str]


def entity_name(text: object) -> str | None:
    """The graph key of a name, or ``None`` if nothing usable is left."""
    if not isinstance(text, str):
        return None
    name = normalize_entity(" ".join(text.split()))
    return name[:MAX_NAME].strip() or None


def relationship_name(text: object) -> str | None:
    """``"Lives in"`` -> ``"lives_in"``; ``None`` if nothing usable is left."""
    if not isinstance(text, str):
        return None
    name = _NOT_WORD.sub("_", text.strip().lower()).strip("_")
    return name[:MAX_LABEL].strip("_") or None


def _is_date_or_number(key: str) -> bool:
    return key.isdigit() or key in MONTHS or key.startswith(_MONTH_PREFIXES)


def graph_entities(text: str) -> list[str]:
    """The names and titles of ``text``, in order (see the module docstring)."""
    keys = [k for k in extract_entities(text) if not _is_date_or_number(k)]
    words = {w for k in keys if " " in k for w in k.split()}
    return [k for k in keys if " " in k or k not in words]


def offline_triples(text: str, speaker: str | None = None) -> list[Triple]:
    """Rule-based relations of ``text`` said by ``speaker`` (see the module docstring)."""
    names = graph_entities(text)
    subject = entity_name(speaker) if speaker else None
    names = [n for n in names if n != subject][:MAX_LINKED]
    triples: list[Triple] = [(subject, MENTIONS, n) for n in names] if subject else []
    triples.extend((a, CO_MENTIONED, b) for i, a in enumerate(names) for b in names[i + 1 :])
    return triples
