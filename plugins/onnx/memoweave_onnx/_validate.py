"""Input checks shared by the providers of this package."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memoweave.errors import ValidationError


def check_texts(texts: Any, *, what: str = "texts") -> list[str]:
    """Return ``texts`` as a list of str; reject a bare string or non-str items."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise ValidationError(
            f"{what} must be a list of strings, got {type(texts).__name__}",
            hint=f"Pass a list, e.g. [{what[:-1]!r}] for a single one.",
            details={"argument": what},
        )
    for position, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValidationError(
                f"{what}[{position}] must be a str, got {type(text).__name__}",
                hint="Convert every item to str before calling.",
                details={"argument": what, "index": position},
            )
    return list(texts)


def check_purpose(purpose: Any) -> str:
    """Accept only the contract's two purposes."""
    if purpose not in ("document", "query"):
        raise ValidationError(
            f"purpose must be 'document' or 'query', got {purpose!r}",
            hint="Use purpose='document' for stored texts and purpose='query' for searches.",
            details={"argument": "purpose"},
        )
    return str(purpose)
