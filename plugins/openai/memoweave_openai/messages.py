"""Validation and normalisation of chat messages, tools and tool calls (no I/O).

Messages are checked and copied before anything is sent: roles are known, content is a
string, ``None`` (assistant/tool turns) or a list of text/image parts. Text-only part lists
are joined into one string, because several OpenAI-compatible servers (llama.cpp chat
templates among them) do not understand parts; lists with images are kept as they are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memoweave.errors import LLMError, ValidationError
from memoweave.providers.llm import Message, ToolCall

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_HINT = 'Pass a non-empty list of {"role": ..., "content": ...} dicts (OpenAI chat format).'


def _invalid(message: str, index: int | None = None) -> ValidationError:
    details = {"index": index} if index is not None else {}
    return ValidationError(message, hint=_HINT, details=details)


def _content(content: object, index: int, vision: bool) -> object:
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, Sequence) or isinstance(content, (bytes, bytearray)):
        raise _invalid(f"messages[{index}].content must be a string or a list of parts", index)
    texts: list[str] = []
    has_image = False
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "image_url":
            if not vision:
                raise ValidationError(
                    f"messages[{index}] has an image part but this model has no vision",
                    hint="Set vision: true in the LLM config for a vision model, or drop images.",
                    details={"index": index},
                )
            has_image = True
        else:
            raise _invalid(f"messages[{index}].content has an invalid part: {part!r}", index)
    return [dict(p) for p in content] if has_image else "\n".join(texts)


def normalize_messages(messages: object, *, vision: bool) -> list[Message]:
    """Validated copies of ``messages``; raise ValidationError when malformed."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise _invalid(f"messages must be a list, got {type(messages).__name__}")
    if not messages:
        raise _invalid("messages is empty")
    out: list[Message] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise _invalid(f"messages[{index}] is {type(message).__name__}, not a dict", index)
        role = message.get("role")
        if role not in ROLES:
            raise _invalid(f"messages[{index}].role {role!r} is not one of {sorted(ROLES)}", index)
        copy = dict(message)
        copy["content"] = _content(message.get("content"), index, vision)
        if copy["content"] is None and role not in ("assistant", "tool", "function"):
            raise _invalid(f"messages[{index}] ({role}) has no content", index)
        out.append(copy)
    return out


def normalize_tools(tools: object) -> list[dict[str, Any]] | None:
    """OpenAI ``tools`` (bare function specs are wrapped); None/[] → None."""
    if tools is None:
        return None
    if isinstance(tools, (str, bytes)) or not isinstance(tools, Sequence):
        raise ValidationError("tools must be a list of tool specs", hint=_HINT)
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
            raise ValidationError(
                f"invalid tool spec {tool!r}",
                hint='Use {"type": "function", "function": {"name", "description", "parameters"}}.',
            )
        out.append(wrapped)
    return out or None


def parse_tool_calls(message: Any) -> list[ToolCall]:
    """ToolCalls from an SDK chat message (``tool_calls`` or legacy ``function_call``)."""
    raw = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]
    legacy = getattr(message, "function_call", None)
    if not raw and legacy is not None:
        raw = [(None, legacy.name, legacy.arguments)]
    calls: list[ToolCall] = []
    for call_id, name, arguments in raw:
        try:
            parsed = json.loads(arguments) if arguments else {}
        except json.JSONDecodeError as exc:
            raise LLMError(
                f"tool call {name!r} has arguments that are not JSON: {arguments!r}",
                hint="Raise max_tokens (the arguments may be truncated) or use a stronger model.",
                details={"tool": name, "arguments": arguments},
            ) from exc
        if not isinstance(parsed, dict):
            raise LLMError(
                f"tool call {name!r} arguments are not a JSON object: {arguments!r}",
                details={"tool": name, "arguments": arguments},
            )
        calls.append(ToolCall(name=name, arguments=parsed, id=call_id))
    return calls


__all__ = ["ROLES", "normalize_messages", "normalize_tools", "parse_tool_calls"]
