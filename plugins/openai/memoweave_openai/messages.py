"""Validation and normalisation of chat messages and tool calls (no I/O).

Messages are checked (with :mod:`memoweave.providers.chat`) and copied before anything is
sent: roles are known, content is a string, ``None`` (assistant/tool turns) or a list of
text/image parts. Text-only part lists are joined into one string, because several
OpenAI-compatible servers (llama.cpp chat templates among them) do not understand parts;
lists with images are kept as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from memoweave.errors import ValidationError
from memoweave.providers.chat import (
    check_messages,
    invalid_message,
    split_parts,
    tool_arguments,
)
from memoweave.providers.llm import Message, ToolCall

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})


def _content(content: object, index: int, vision: bool) -> object:
    if content is None or isinstance(content, str):
        return content
    texts, images = split_parts(content, index)
    if not images:
        return "\n".join(texts)
    if not vision:
        raise ValidationError(
            f"messages[{index}] has an image part but this model has no vision",
            hint="Set vision: true in the LLM config for a vision model, or drop images.",
            details={"index": index},
        )
    return [dict(part) for part in cast(Sequence[Mapping[str, Any]], content)]


def normalize_messages(messages: object, *, vision: bool) -> list[Message]:
    """Validated copies of ``messages``; raise ValidationError when malformed."""
    out: list[Message] = []
    for index, message in enumerate(check_messages(messages)):
        role = message.get("role")
        if role not in ROLES:
            raise invalid_message(
                f"messages[{index}].role {role!r} is not one of {sorted(ROLES)}", index
            )
        copy = dict(message)
        copy["content"] = _content(message.get("content"), index, vision)
        if copy["content"] is None and role not in ("assistant", "tool", "function"):
            raise invalid_message(f"messages[{index}] ({role}) has no content", index)
        out.append(copy)
    return out


def parse_tool_calls(message: Any) -> list[ToolCall]:
    """ToolCalls from an SDK chat message (``tool_calls`` or legacy ``function_call``)."""
    raw = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]
    legacy = getattr(message, "function_call", None)
    if not raw and legacy is not None:
        raw = [(None, legacy.name, legacy.arguments)]
    return [
        ToolCall(name=name, arguments=tool_arguments(name, arguments), id=call_id)
        for call_id, name, arguments in raw
    ]


__all__ = ["ROLES", "normalize_messages", "parse_tool_calls"]
