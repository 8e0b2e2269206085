"""Turning an LLM's answer into one score per document (pure functions, no I/O).

Accepted answers, for ``n`` documents numbered 1..n in the prompt:

- ``{"scores": [s1, ..., sn]}`` (the requested form) or a bare ``[s1, ..., sn]``: positional;
- ``{"scores": [{"id": 2, "score": 7}, ...]}`` or a bare list of such objects (keys ``id`` /
  ``index`` / ``doc`` / ``document`` and ``score`` / ``relevance``);
- ``{"1": 7, "2": 0, ...}`` or ``{"scores": {"1": 7, ...}}``: by id.

Ids are 1-based (0-based is accepted when the ids are exactly 0..n-1); every document must
get exactly one finite number (numeric strings are accepted). The JSON may be wrapped in a
Markdown fence or surrounded by prose: the first decodable JSON value is used.
Anything else raises :class:`UnusableAnswer` with a one-line reason.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_ID_KEYS = ("id", "index", "doc", "document", "doc_id", "number")
_SCORE_KEYS = ("score", "relevance", "rating")


class UnusableAnswer(ValueError):
    """The answer holds no valid score per document; ``str(self)`` is the reason."""


def parse_scores(text: str, n: int) -> list[float]:
    """The ``n`` scores in ``text``, in document order; raise ``UnusableAnswer`` otherwise."""
    value = _first_json_value(text)
    if isinstance(value, Mapping) and "scores" in value:
        value = value["scores"]
    if isinstance(value, list) and all(not isinstance(v, (Mapping, list)) for v in value):
        if len(value) != n:
            raise UnusableAnswer(f"expected {n} scores, got {len(value)}")
        return [_number(v, f"score {i + 1}") for i, v in enumerate(value)]
    if isinstance(value, list):
        pairs = [_pair(item) for item in value]
    elif isinstance(value, Mapping):
        pairs = [(_id(key), val) for key, val in value.items()]
    else:
        raise UnusableAnswer(f"expected a JSON object with 'scores', got {type(value).__name__}")
    return _by_id(pairs, n)


def _first_json_value(text: str) -> Any:
    if not isinstance(text, str) or not text.strip():
        raise UnusableAnswer("the answer is empty")
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        stripped = candidate.strip()
        try:
            return json.loads(stripped)
        except ValueError:
            pass
        for match in re.finditer(r"[\[{]", stripped):
            try:
                value, _ = decoder.raw_decode(stripped, match.start())
            except ValueError:
                continue
            return value
    raise UnusableAnswer("no JSON object or array in the answer")


def _pair(item: Any) -> tuple[int, Any]:
    if not isinstance(item, Mapping):
        raise UnusableAnswer(f"expected objects with id and score, got {item!r:.60}")
    id_key = next((k for k in _ID_KEYS if k in item), None)
    score_key = next((k for k in _SCORE_KEYS if k in item), None)
    if id_key is None or score_key is None:
        raise UnusableAnswer(f"object without id and score: {dict(item)!r:.80}")
    return _id(item[id_key]), item[score_key]


def _id(raw: Any) -> int:
    text = str(raw).strip().strip("[]#")
    if isinstance(raw, bool) or not text.isdigit():
        raise UnusableAnswer(f"document id {raw!r:.40} is not a number")
    return int(text)


def _number(raw: Any, what: str) -> float:
    if isinstance(raw, bool):
        raise UnusableAnswer(f"{what} is a boolean, not a number")
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise UnusableAnswer(f"{what} is not a number: {raw!r:.40}") from None
    if not math.isfinite(value):
        raise UnusableAnswer(f"{what} is not finite: {raw!r:.40}")
    return value


def _by_id(pairs: list[tuple[int, Any]], n: int) -> list[float]:
    ids = [doc_id for doc_id, _ in pairs]
    offset = 0 if sorted(ids) == list(range(n)) else 1
    if sorted(ids) != list(range(offset, n + offset)):
        raise UnusableAnswer(f"expected ids 1..{n} once each, got {sorted(ids)[:20]}")
    scores = [0.0] * n
    for doc_id, raw in pairs:
        scores[doc_id - offset] = _number(raw, f"score of document {doc_id}")
    return scores
