"""OpenAI-style chat messages and tools → Ollama's ``/api/chat`` shapes (no I/O).

- ``content`` parts: text parts are joined with newlines; ``image_url`` parts must be
  ``data:`` URLs (base64) and move to the message's ``images`` list (vision models only;
  remote image URLs are rejected: Ollama does not fetch them and memoweave makes no
  network calls of its own).
- ``developer`` becomes ``system``; ``function`` becomes ``tool``; a tool message's ``name``
  becomes Ollama's ``tool_name``.
- assistant ``tool_calls`` get their JSON-string ``arguments`` parsed (Ollama wants objects).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from typing import Any

from memoweave.errors import LLMError, ValidationError
from memoweave.providers.llm import ToolCall

_ROLE_MAP = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}
_HINT = 'Pass a non-empty list of {"role": ..., "content": ...} dicts (OpenAI chat format).'
_NO_VISION = "Set vision: true in the LLM config for a vision model, or drop the images."


def _invalid(message: str, index: int | None = None, hint: str = _HINT) -> ValidationError:
    return ValidationError(message, hint=hint, details={} if index is None else {"index": index})


def _image_data(url: object, index: int) -> str:
    """The base64 payload of a ``data:`` URL (validated)."""
    if not isinstance(url, str) or not url.startswith("data:") or "," not in url:
        raise _invalid(
            f"messages[{index}] has an image that is not a base64 data: URL",
            index,
            hint="Inline images as data:image/png;base64,... (Ollama does not fetch URLs).",
        )
    header, payload = url.split(",", 1)
    if not header.endswith(";base64"):
        raise _invalid(f"messages[{index}] image data URL is not base64", index)
    try:
        base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise _invalid(f"messages[{index}] image is not valid base64: {exc}", index) from exc
    return payload


def _content(content: object, index: int, vision: bool) -> tuple[str, list[str]]:
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    if not isinstance(content, Sequence) or isinstance(content, (bytes, bytearray)):
        raise _invalid(f"messages[{index}].content must be a string or a list of parts", index)
    texts: list[str] = []
    images: list[str] = []
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "image_url":
            if not vision:
                raise _invalid(f"messages[{index}] has an image part", index, hint=_NO_VISION)
            spec = part.get("image_url")
            images.append(
                _image_data(spec.get("url") if isinstance(spec, Mapping) else spec, index)
            )
        else:
            raise _invalid(f"messages[{index}].content has an invalid part: {part!r}", index)
    return "\n".join(texts), images


def _tool_calls(raw: object, index: int) -> list[dict[str, Any]]:
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise _invalid(f"messages[{index}].tool_calls must be a list", index)
    calls: list[dict[str, Any]] = []
    for call in raw:
        function = call.get("function") if isinstance(call, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(name, str):
            raise _invalid(f"messages[{index}] has an invalid tool call: {call!r}", index)
        arguments = function.get("arguments") or {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError as exc:
                raise _invalid(
                    f"messages[{index}] tool call {name!r} arguments are not JSON", index
                ) from exc
        if not isinstance(arguments, Mapping):
            raise _invalid(f"messages[{index}] tool call {name!r} arguments not an object", index)
        calls.append({"function": {"name": name, "arguments": dict(arguments)}})
    return calls


def to_ollama_messages(messages: object, *, vision: bool) -> list[dict[str, Any]]:
    """Validated Ollama chat messages for ``messages``; raise ValidationError if malformed."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise _invalid(f"messages must be a list, got {type(messages).__name__}")
    if not messages:
        raise _invalid("messages is empty")
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise _invalid(f"messages[{index}] is {type(message).__name__}, not a dict", index)
        role = _ROLE_MAP.get(message.get("role"))  # type: ignore[arg-type]
        if role is None:
            raise _invalid(
                f"messages[{index}].role {message.get('role')!r} is not one of {sorted(_ROLE_MAP)}",
                index,
            )
        text, images = _content(message.get("content"), index, vision)
        converted: dict[str, Any] = {"role": role, "content": text}
        extra_images = message.get("images")  # Ollama-native: base64 strings
        if extra_images:
            if not vision:
                raise _invalid(f"messages[{index}] has images", index, hint=_NO_VISION)
            images += [_image_data(f"data:;base64,{i}", index) for i in extra_images]
        if images:
            converted["images"] = images
        if message.get("tool_calls"):
            converted["tool_calls"] = _tool_calls(message["tool_calls"], index)
        if role == "tool" and isinstance(message.get("name"), str):
            converted["tool_name"] = message["name"]
        if message.get("content") is None and role in ("system", "user") and not images:
            raise _invalid(f"messages[{index}] ({role}) has no content", index)
        out.append(converted)
    return out


def to_ollama_tools(tools: object) -> list[dict[str, Any]] | None:
    """Ollama ``tools`` (OpenAI function specs; bare specs are wrapped); None/[] → None."""
    if tools is None:
        return None
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise ValidationError("tools must be a list of tool specs", hint=_HINT)
    out: list[dict[str, Any]] = []
    for tool in tools:
        if isinstance(tool, Mapping) and tool.get("type") == "function":
            spec = tool.get("function")
        elif isinstance(tool, Mapping) and "name" in tool:
            spec = tool
        else:
            spec = None
        if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
            raise ValidationError(
                f"invalid tool spec {tool!r}",
                hint='Use {"type": "function", "function": {"name", "description", "parameters"}}.',
            )
        out.append({"type": "function", "function": dict(spec)})
    return out or None


def parse_tool_calls(message: Any) -> list[ToolCall]:
    """ToolCalls of an ``ollama`` response message (arguments must be JSON objects)."""
    calls: list[ToolCall] = []
    for call in getattr(message, "tool_calls", None) or []:
        name = call.function.name
        arguments: Any = call.function.arguments
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                raise LLMError(
                    f"tool call {name!r} has arguments that are not JSON: {arguments!r}",
                    hint="Raise max_tokens (the arguments may be truncated) or use a "
                    "stronger model.",
                    details={"tool": name, "arguments": arguments},
                ) from exc
        if not isinstance(arguments, Mapping):
            raise LLMError(
                f"tool call {name!r} arguments are not a JSON object: {arguments!r}",
                details={"tool": name},
            )
        calls.append(ToolCall(name=name, arguments=dict(arguments), id=getattr(call, "id", None)))
    return calls


__all__ = ["parse_tool_calls", "to_ollama_messages", "to_ollama_tools"]
