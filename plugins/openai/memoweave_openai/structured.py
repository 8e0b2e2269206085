"""Structured (JSON) output across OpenAI-compatible servers.

Modes, from strongest to weakest (``LADDER``):

- ``json_schema``: OpenAI's ``response_format={"type": "json_schema", ...}`` (OpenAI, Azure,
  vLLM, llama.cpp's C++ server, LM Studio); the server enforces the schema.
- ``json_object_schema``: ``{"type": "json_object", "schema": {...}}`` (llama-cpp-python,
  Anyscale-style); the server turns the schema into a grammar.
- ``json_object``: plain JSON mode; the schema goes into the prompt.
- ``prompt``: no ``response_format`` at all; instructions plus extraction of the first JSON
  object from the answer (code fences and chatter around it are dropped).

``auto`` starts at ``json_schema`` and steps down the ladder when the server rejects the
request (HTTP 400/422), remembering the first mode that works. Whatever the mode, the
returned text is checked to be exactly one JSON object.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memoweave.providers.llm import Message, ResponseFormat
from memoweave_openai.config import StructuredOutput

LADDER: tuple[str, ...] = ("json_schema", "json_object_schema", "json_object", "prompt")
NATIVE_SCHEMA_MODES = frozenset({"json_schema", "json_object_schema"})
_NAME_RE = re.compile(r"[^a-zA-Z0-9_-]+")
_FENCE_RE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```\s*$", re.DOTALL)


@dataclass(frozen=True)
class JsonRequest:
    """What the caller asked for: JSON mode (``schema is None``) or a schema."""

    schema: dict[str, Any] | None = None
    name: str = "response"


def normalize_format(response_format: ResponseFormat) -> JsonRequest | None:
    """Accept ``None``, ``"json_object"``, a JSON schema, or OpenAI's wrapper dicts.

    Raises ValueError for anything else.
    """
    if response_format is None:
        return None
    if response_format == "json_object":
        return JsonRequest()
    if not isinstance(response_format, dict):
        raise ValueError(f"unsupported response_format {response_format!r}")
    kind = response_format.get("type")
    if kind == "json_object" and set(response_format) <= {"type", "schema"}:
        schema = response_format.get("schema")
        return JsonRequest(schema=schema) if isinstance(schema, dict) else JsonRequest()
    if kind == "json_schema" and isinstance(response_format.get("json_schema"), dict):
        wrapper = response_format["json_schema"]
        schema = wrapper.get("schema")
        if not isinstance(schema, dict):
            raise ValueError("response_format.json_schema.schema must be a JSON schema object")
        return JsonRequest(schema=schema, name=_schema_name(wrapper.get("name")))
    return JsonRequest(schema=response_format, name=_schema_name(response_format.get("title")))


def _schema_name(raw: object) -> str:
    name = _NAME_RE.sub("_", raw).strip("_")[:64] if isinstance(raw, str) else ""
    return name or "response"


def initial_mode(configured: StructuredOutput) -> str:
    """The first mode to try; ``auto`` assumes full OpenAI support and steps down."""
    return "json_schema" if configured == "auto" else configured


def next_mode(mode: str) -> str | None:
    """The next weaker mode of the ladder, or None after ``prompt``."""
    index = LADDER.index(mode)
    return LADDER[index + 1] if index + 1 < len(LADDER) else None


def response_format_param(
    request: JsonRequest, mode: str, *, strict: bool = False
) -> dict[str, Any] | None:
    """The ``response_format`` request field for ``mode`` (None in prompt mode)."""
    if mode == "prompt":
        return None
    if request.schema is None:
        return {"type": "json_object"}
    if mode == "json_schema":
        body: dict[str, Any] = {"name": request.name, "schema": request.schema}
        if strict:
            body["strict"] = True
        return {"type": "json_schema", "json_schema": body}
    if mode == "json_object_schema":
        return {"type": "json_object", "schema": request.schema}
    return {"type": "json_object"}


def instruction(request: JsonRequest, mode: str) -> str | None:
    """The system instruction for ``mode`` (None when the server enforces the schema)."""
    if mode == "json_schema" and request.schema is not None:
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
    "next_mode",
    "normalize_format",
    "response_format_param",
    "with_instruction",
]
