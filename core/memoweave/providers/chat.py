"""Checks of OpenAI-style chat input shared by LLM providers (no I/O).

The LLM contract takes OpenAI-style ``messages`` and ``tools`` whatever the server speaks;
these helpers do the provider-agnostic part of reading them. Bad input raises
:class:`ValidationError` (``details["index"]`` names the message); a model's malformed
tool call raises :class:`LLMError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memoweave.errors import LLMError, ValidationError

MESSAGES_HINT = 'Pass a non-empty list of {"role": ..., "content": ...} dicts (OpenAI chat format).'
TOOL_HINT = 'Use {"type": "function", "function": {"name", "description", "parameters"}}.'


def invalid_message(
    message: str, index: int | None = None, hint: str = MESSAGES_HINT
) -> ValidationError:
    """The ValidationError of a malformed ``messages`` (``details["index"]`` when known)."""
    return ValidationError(message, hint=hint, details={} if index is None else {"index": index})


def check_messages(messages: object) -> list[Mapping[str, Any]]:
    """``messages`` as a non-empty list of mappings (roles and content are not checked)."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise invalid_message(f"messages must be a list, got {type(messages).__name__}")
    if not messages:
        raise invalid_message("messages is empty")
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise invalid_message(
                f"messages[{index}] is {type(message).__name__}, not a dict", index
            )
    return list(messages)


def split_parts(content: object, index: int) -> tuple[list[str], list[Mapping[str, Any]]]:
    """The texts and the ``image_url`` parts of message ``index``'s list ``content``."""
    if not isinstance(content, Sequence) or isinstance(content, (str, bytes, bytearray)):
        raise invalid_message(
            f"messages[{index}].content must be a string or a list of parts", index
        )
    texts: list[str] = []
    images: list[Mapping[str, Any]] = []
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "image_url":
            images.append(part)
        else:
            raise invalid_message(f"messages[{index}].content has an invalid part: {part!r}", index)
    return texts, images


def function_tools(tools: object) -> list[dict[str, Any]] | None:
    """``tools`` as ``{"type": "function", "function": spec, ...}`` dicts; None/[] → None.

    A bare function spec (``{"name": ...}``) is wrapped; other keys of a wrapped tool are
    kept. Every spec must have a str ``name``.
    """
    if tools is None:
        return None
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise ValidationError("tools must be a list of tool specs", hint=MESSAGES_HINT)
    out: list[dict[str, Any]] = []
    for tool in tools:
        if isinstance(tool, Mapping) and tool.get("type") == "function":
            spec = tool.get("function")
            wrapped = dict(tool)
        elif isinstance(tool, Mapping) and "name" in tool:
            spec, wrapped = tool, {"type": "function", "function": dict(tool)}
        else:
            spec, wrapped = None, {}
        if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
            raise ValidationError(f"invalid tool spec {tool!r}", hint=TOOL_HINT)
        out.append(wrapped)
    return out or None


def tool_arguments(name: str, arguments: object) -> dict[str, Any]:
    """A model's tool-call ``arguments`` (JSON text or a mapping) as a dict; LLMError if not
    a JSON object. Empty text or None means no arguments."""
    value = arguments
    if value is None:
        value = {}
    elif isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError as exc:
            raise LLMError(
                f"tool call {name!r} has arguments that are not JSON: {arguments!r}",
                hint="Raise max_tokens (the arguments may be truncated) or use a stronger model.",
                details={"tool": name, "arguments": arguments},
            ) from exc
    if not isinstance(value, Mapping):
        raise LLMError(
            f"tool call {name!r} arguments are not a JSON object: {arguments!r}",
            details={"tool": name, "arguments": arguments},
        )
    return dict(value)


__all__ = [
    "MESSAGES_HINT",
    "TOOL_HINT",
    "check_messages",
    "function_tools",
    "invalid_message",
    "split_parts",
    "tool_arguments",
]
