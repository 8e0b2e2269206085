"""Structured (JSON) output across OpenAI-compatible servers.

``response_format`` follows the core's contract (:mod:`memoweave.providers.llm`): ``None``,
``"json_object"`` or a :class:`~memoweave.providers.llm.ResponseSchema`; anything else is a
``ValidationError`` before any request. Modes, from strongest to weakest (``LADDER``):

- ``json_schema``: OpenAI's ``response_format={"type": "json_schema", ...}`` (OpenAI, Azure,
  vLLM, llama.cpp's C++ server, LM Studio); the server enforces the schema.
- ``json_object_schema``: ``{"type": "json_object", "schema": {...}}`` (llama-cpp-python,
  Anyscale-style); the server turns the schema into a grammar.
- ``json_object``: plain JSON mode; the schema goes into the prompt.
- ``prompt``: no ``response_format`` at all; instructions plus extraction of the first JSON
  object from the answer (code fences and chatter around it are dropped).

``auto`` starts at ``json_schema`` and steps down the ladder when the server rejects the
request (HTTP 400/422), remembering the first mode that works. Whatever the mode, the
returned text is checked to be exactly one JSON object. ``strict: true`` is sent with
``json_schema`` when the ``ResponseSchema`` says so (config ``strict_schema`` overrides).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memoweave.providers.llm import Message, check_response_format
from memoweave_openai.config import StructuredOutput

LADDER: tuple[str, ...] = ("json_schema", "json_object_schema", "json_object", "prompt")
NATIVE_SCHEMA_MODES = frozenset({"json_schema", "json_object_schema"})
_FENCE_RE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```\s*$", re.DOTALL)


@dataclass(frozen=True)
class JsonRequest:
    """What the caller asked for: JSON mode (``schema is None``) or a named schema."""

    schema: dict[str, Any] | None = None
    name: str = "response"
    strict: bool = False


def json_request(response_format: object) -> JsonRequest | None:
    """The request behind a contract ``response_format``; ``ValidationError`` otherwise."""
    checked = check_response_format(response_format)
    if checked is None:
        return None
    if checked == "json_object":
        return JsonRequest()
    return JsonRequest(schema=checked.schema, name=checked.name, strict=checked.strict)


def initial_mode(configured: StructuredOutput) -> str:
    """The first mode to try; ``auto`` assumes full OpenAI support and steps down."""
    return "json_schema" if configured == "auto" else configured


def next_mode(mode: str) -> str | None:
    """The next weaker mode of the ladder, or None after ``prompt``."""
    index = LADDER.index(mode)
    return LADDER[index + 1] if index + 1 < len(LADDER) else None


def response_format_param(
    request: JsonRequest, mode: str, *, strict: bool | None = None
) -> dict[str, Any] | None:
    """The ``response_format`` request field for ``mode`` (None in prompt mode).

    ``strict`` overrides the request's own flag when not None."""
    if mode == "prompt":
        return None
    if request.schema is None:
        return {"type": "json_object"}
    if mode == "json_schema":
        body: dict[str, Any] = {"name": request.name, "schema": request.schema}
        if request.strict if strict is None else strict:
            body["strict"] = True
        return {"type": "json_schema", "json_schema": body}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": request.schema}
    return {"type": "json_object"}


def instruction(request: JsonRequest, mode: str) -> str | None:
    """The system instruction for ``mode`` (None when the server enforces the schema: its
    grammar already does, and the schema's tokens would only slow the prompt down)."""
    if mode in NATIVE_SCHEMA_MODES and request.schema is not None:
        return None
    text = "Respond with one JSON object only, without any other text."
    if request.schema is not None:
        text += " It must match this JSON schema: " + json.dumps(request.schema)
    return text


def with_instruction(messages: list[Message], text: str | None) -> list[Message]:
    """A copy of ``messages`` with ``text`` appended to the system prompt (or prepended)."""
    if not text:
        return list(messages)
    out = [dict(m) for m in messages]
    first = out[0] if out else None
    if first is not None and first.get("role") == "system":
        content = first.get("content")
        if isinstance(content, str):
            first["content"] = f"{content}\n\n{text}" if content else text
            return out
        if isinstance(content, list):
            first["content"] = [*content, {"type": "text", "text": text}]
            return out
    return [{"role": "system", "content": text}, *out]


def extract_json_object(text: str) -> str | None:
    """The first complete JSON object in ``text`` (exact substring), or None."""
    stripped = text.strip()
    fenced = _FENCE_RE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        if isinstance(json.loads(stripped), dict):
            return stripped
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    start = stripped.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(stripped, start)
        except json.JSONDecodeError:
            pass
        else:
            if isinstance(value, dict):
                return stripped[start:end]
        start = stripped.find("{", start + 1)
    return None


__all__ = [
    "LADDER",
    "NATIVE_SCHEMA_MODES",
    "JsonRequest",
    "extract_json_object",
    "initial_mode",
    "instruction",
    "json_request",
    "next_mode",
    "response_format_param",
    "with_instruction",
]
