"""Argument checks every provider can share, so that all of them reject bad input the
same way (``ValidationError`` with a hint and ``details["argument"]``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memoweave.errors import ValidationError


def check_texts(texts: Any, *, what: str = "texts") -> list[str]:
    """``texts`` as a list of str; a bare string or a non-str item is rejected."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise ValidationError(
            f"{what} must be a list of strings, got {type(texts).__name__}",
            hint=f"Pass a list, e.g. [{what[:-1]!r}] for a single one.",
            details={"argument": what},
        )
    for position, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValidationError(
                f"{what}[{position}] is {type(text).__name__}, not str",
                hint="Convert every item to str before calling.",
                details={"argument": what, "index": position},
            )
    return list(texts)


def check_purpose(purpose: Any) -> str:
    """One of the embedder contract's two purposes."""
    if purpose not in ("document", "query"):
        raise ValidationError(
            f"purpose must be 'document' or 'query', got {purpose!r}",
            hint="Use purpose='document' for stored texts and purpose='query' for searches.",
            details={"argument": "purpose"},
        )
    return str(purpose)


def check_query(query: Any) -> str:
    """A reranker query: a str."""
    if not isinstance(query, str):
        raise ValidationError(
            f"query must be a str, got {type(query).__name__}",
            hint="Pass the search query text.",
            details={"argument": "query"},
        )
    return query


def check_pairs(pairs: Any) -> list[tuple[str, str]]:
    """Reranker ``(query, document)`` pairs as a list of str tuples; anything else is
    rejected."""
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence):
        raise ValidationError(
            f"pairs must be a list of (query, document) pairs, got {type(pairs).__name__}",
            hint="Pass a list such as [('where does she live?', 'She lives in Lisbon.')].",
            details={"argument": "pairs"},
        )
    checked: list[tuple[str, str]] = []
    for position, pair in enumerate(pairs):
        if (
            not isinstance(pair, (tuple, list))
            or len(pair) != 2
            or not all(isinstance(text, str) for text in pair)
        ):
            raise ValidationError(
                f"pairs[{position}] is not a (query, document) pair of two strings",
                hint="Give each pair as a tuple of the query text and the document text.",
                details={"argument": "pairs", "index": position},
            )
        checked.append((pair[0], pair[1]))
    return checked


def check_positive(value: Any, name: str) -> int:
    """``value`` if it is a positive int (bool is rejected); ``name`` is the argument."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(
            f"{name} must be a positive int, got {value!r}",
            hint=f"Pass {name} >= 1.",
            details={"argument": name},
        )
    return value


def check_top_k(top_k: Any) -> int:
    """A positive int (bool is rejected)."""
    return check_positive(top_k, "top_k")
