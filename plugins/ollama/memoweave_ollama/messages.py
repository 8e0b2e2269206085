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

from memoweave.providers.chat import (
    check_messages,
    function_tools,
    invalid_message,
    split_parts,
    tool_arguments,
)
from memoweave.providers.llm import ToolCall

_ROLE_MAP = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
    "function": "tool",
}
_NO_VISION = "Set vision: true in the LLM config for a vision model, or drop the images."


def _image_data(url: object, index: int) -> str:
    """The base64 payload of a ``data:`` URL (validated)."""
    if not isinstance(url, str) or not url.startswith("data:") or "," not in url:
        raise invalid_message(
            f"messages[{index}] has an image that is not a base64 data: URL",
            index,
            hint="Inline images as data:image/png;base64,... (Ollama does not fetch URLs).",
        )
    header, payload = url.split(",", 1)
    if not header.endswith(";base64"):
        raise invalid_message(f"messages[{index}] image data URL is not base64", index)
    try:
        base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise invalid_message(f"messages[{index}] image is not valid base64: {exc}", index) from exc
    return payload


def _content(content: object, index: int, vision: bool) -> tuple[str, list[str]]:
    if content is None:
        return "", []
    if isinstance(content, str):
        return content, []
    texts, parts = split_parts(content, index)
    if parts and not vision:
        raise invalid_message(f"messages[{index}] has an image part", index, hint=_NO_VISION)
    images: list[str] = []
    for part in parts:
        spec = part.get("image_url")
        images.append(_image_data(spec.get("url") if isinstance(spec, Mapping) else spec, index))
    return "\n".join(texts), images


def _tool_calls(raw: object, index: int) -> list[dict[str, Any]]:
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise invalid_message(f"messages[{index}].tool_calls must be a list", index)
    calls: list[dict[str, Any]] = []
    for call in raw:
        function = call.get("function") if isinstance(call, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(name, str):
            raise invalid_message(f"messages[{index}] has an invalid tool call: {call!r}", index)
        arguments = function.get("arguments") or {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError as exc:
                raise invalid_message(
                    f"messages[{index}] tool call {name!r} arguments are not JSON", index
                ) from exc
        if not isinstance(arguments, Mapping):
            raise invalid_message(
                f"messages[{index}] tool call {name!r} arguments not an object", index
            )
        calls.append({"function": {"name": name, "arguments": dict(arguments)}})
    return calls


def to_ollama_messages(messages: object, *, vision: bool) -> list[dict[str, Any]]:
    """Validated Ollama chat messages for ``messages``; raise ValidationError if malformed."""
    out: list[dict[str, Any]] = []
    for index, message in enumerate(check_messages(messages)):
        role = _ROLE_MAP.get(message.get("role"))  # type: ignore[arg-type]  # a non-str role maps to None, refused next
        if role is None:
            raise invalid_message(
                f"messages[{index}].role {message.get('role')!r} is not one of {sorted(_ROLE_MAP)}",
                index,
            )
        text, images = _content(message.get("content"), index, vision)
        converted: dict[str, Any] = {"role": role, "content": text}
        extra_images = message.get("images")  # Ollama-native: base64 strings
        if extra_images:
            if not vision:
                raise invalid_message(f"messages[{index}] has images", index, hint=_NO_VISION)
            images += [_image_data(f"data:;base64,{i}", index) for i in extra_images]
        if images:
            converted["images"] = images
        if message.get("tool_calls"):
            converted["tool_calls"] = _tool_calls(message["tool_calls"], index)
        if role == "tool" and isinstance(message.get("name"), str):
            converted["tool_name"] = message["name"]
        if message.get("content") is None and role in ("system", "user") and not images:
            raise invalid_message(f"messages[{index}] ({role}) has no content", index)
        out.append(converted)
    return out


def to_ollama_tools(tools: object) -> list[dict[str, Any]] | None:
    """Ollama ``tools`` (OpenAI function specs; bare specs are wrapped); None/[] → None."""
    checked = function_tools(tools)
    if checked is None:
        return None
    return [{"type": "function", "function": dict(tool["function"])} for tool in checked]


def parse_tool_calls(message: Any) -> list[ToolCall]:
    """ToolCalls of an ``ollama`` response message (arguments must be JSON objects)."""
    return [
        ToolCall(
            name=call.function.name,
            arguments=tool_arguments(call.function.name, call.function.arguments),
            id=getattr(call, "id", None),
        )
        for call in getattr(message, "tool_calls", None) or []
    ]


__all__ = ["parse_tool_calls", "to_ollama_messages", "to_ollama_tools"]
