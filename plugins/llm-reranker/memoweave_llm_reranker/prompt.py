"""The reranking prompt, its JSON schema and the repair message (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence

from memoweave.providers.llm import Message, ResponseSchema

SYSTEM = (
    "You are a search relevance judge. For each numbered document, rate how relevant it "
    "is to the query on a scale from 0 (unrelated) to 10 (directly answers the query). "
    'Answer with only a JSON object: {"scores": [s1, s2, ...]}, one integer per document, '
    "in document order."
)


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    if not flat:
        return "(empty)"
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def build_messages(query: str, documents: Sequence[str], max_chars: int) -> list[Message]:
    """System + user messages listing the documents as ``[1] text`` lines."""
    lines = [f"[{i}] {_clip(doc, max_chars)}" for i, doc in enumerate(documents, start=1)]
    n = len(documents)
    user = (
        f"Query: {_clip(query, max_chars)}\n\nDocuments:\n"
        + "\n".join(lines)
        + f'\n\nReturn {{"scores": [...]}} with exactly {n} integers from 0 to 10.'
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def score_schema(n: int) -> ResponseSchema:
    """The answer's schema: exactly ``n`` integer scores in 0..10 (small bounds: a grammar
    of ``n`` repetitions, fine for the few dozen candidates a reranker sees)."""
    return ResponseSchema(
        "rerank_scores",
        {
            "type": "object",
            "properties": {
                "scores": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 0, "maximum": 10},
                    "minItems": n,
                    "maxItems": n,
                }
            },
            "required": ["scores"],
            "additionalProperties": False,
        },
    )


def repair_messages(messages: list[Message], answer: str, reason: str, n: int) -> list[Message]:
    """The conversation plus the unusable answer and a request to fix it."""
    return [
        *messages,
        {"role": "assistant", "content": answer},
        {
            "role": "user",
            "content": (
                f"That answer could not be used ({reason}). Reply with only "
                f'{{"scores": [...]}} containing exactly {n} integers from 0 to 10, '
                "one per document, in document order."
            ),
        },
    ]
