"""Argument checks of :meth:`LLMReranker.rerank` (raise ``ValidationError``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memoweave.errors import ValidationError


def check_query(query: Any) -> str:
    """The query must be a str."""
    if not isinstance(query, str):
        raise ValidationError(
            f"query must be a str, got {type(query).__name__}",
            hint="Pass the search query text.",
            details={"argument": "query"},
        )
    return query


def check_documents(documents: Any, limit: int) -> list[str]:
    """A list of at most ``limit`` strings (a bare str is rejected)."""
    if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence):
        raise ValidationError(
            f"documents must be a list of strings, got {type(documents).__name__}",
            hint="Pass a list of candidate texts.",
            details={"argument": "documents"},
        )
    for position, doc in enumerate(documents):
        if not isinstance(doc, str):
            raise ValidationError(
                f"documents[{position}] must be a str, got {type(doc).__name__}",
                hint="Convert every candidate to str before calling.",
                details={"argument": "documents", "index": position},
            )
    if len(documents) > limit:
        raise ValidationError(
            f"{len(documents)} documents exceed max_documents={limit} for one LLM call",
            hint="Pass fewer candidates or raise the reranker's max_documents setting.",
            details={"argument": "documents", "count": len(documents), "limit": limit},
        )
    return list(documents)


def check_top_k(top_k: Any) -> int:
    """``top_k`` must be a positive int (bool is rejected)."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ValidationError(
            f"top_k must be a positive int, got {top_k!r}",
            hint="Pass top_k >= 1.",
            details={"argument": "top_k"},
        )
    return top_k
