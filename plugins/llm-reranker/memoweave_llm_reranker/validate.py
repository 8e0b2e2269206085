"""Argument checks of :meth:`LLMReranker.rerank` (raise ``ValidationError``)."""

from __future__ import annotations

from typing import Any

from memoweave.errors import ValidationError
from memoweave.providers.checks import check_query, check_texts, check_top_k


def check_documents(documents: Any, limit: int) -> list[str]:
    """A list of at most ``limit`` strings (a bare str is rejected)."""
    texts = check_texts(documents, what="documents")
    if len(texts) > limit:
        raise ValidationError(
            f"{len(texts)} documents exceed max_documents={limit} for one LLM call",
            hint="Pass fewer candidates or raise the reranker's max_documents setting.",
            details={"argument": "documents", "count": len(texts), "limit": limit},
        )
    return texts


__all__ = ["check_documents", "check_query", "check_top_k"]
