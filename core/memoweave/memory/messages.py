"""Normalising the ``messages`` argument of ``add``.

Accepted: a string (one user message), a dict (one message) or a list of dicts with
``role`` (``user``, ``assistant``, ``system``, ``tool``) and ``content`` (a string or a list
of parts: ``{"type": "text", "text": ...}`` / ``{"type": "image_url", "image_url": ...}``).
``name`` becomes the message's actor id; ``id`` is kept as its message id (else generated);
both follow the id rules of :func:`memoweave.memory.scope.validate_identifier`.
``created_at`` (ISO 8601) is normalised to UTC ISO form, so the window sorts correctly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memoweave.errors import ValidationError
from memoweave.memory.clock import iso
from memoweave.memory.ids import new_id
from memoweave.memory.scope import validate_identifier
from memoweave.memory.validate import check_text, check_timestamp

ROLES = ("user", "assistant", "system", "tool")
MAX_MESSAGES = 1000
_HINT = "Pass a string, a message dict {'role': 'user', 'content': '...'} or a list of them."


@dataclass(frozen=True)
class NormalizedMessage:
    """One message: role, text, optional actor name, id, and any image parts."""

    role: str
    text: str
    id: str
    name: str | None = None
    images: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    created_at: str | None = None


def normalize_messages(messages: Any) -> list[NormalizedMessage]:
    """Validate ``messages`` and return them normalised; raise ``ValidationError``."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    elif isinstance(messages, Mapping):
        messages = [messages]
    if not isinstance(messages, list):
        raise ValidationError(
            f"messages must be a str, dict or list, got {type(messages).__name__}", hint=_HINT
        )
    if not messages:
        raise ValidationError("messages is empty", hint=_HINT)
    if len(messages) > MAX_MESSAGES:
        raise ValidationError(
            f"{len(messages)} messages in one call; the limit is {MAX_MESSAGES}",
            hint="Split the conversation into several add() calls.",
        )
    return [_normalize_one(i, m) for i, m in enumerate(messages)]


def _normalize_one(index: int, message: Any) -> NormalizedMessage:
    where = f"messages[{index}]"
    if not isinstance(message, Mapping):
        raise ValidationError(f"{where} must be a dict, got {type(message).__name__}", hint=_HINT)
    role = message.get("role")
    if role not in ROLES:
        raise ValidationError(
            f"{where}.role must be one of {', '.join(ROLES)}, got {role!r}", hint=_HINT
        )
    text, images = _content(where, message.get("content"))
    name = message.get("name")
    if name is not None:
        name = validate_identifier(f"{where}.name", name)
    message_id = message.get("id")
    if message_id is None:
        message_id = new_id()
    elif not isinstance(message_id, (str, int)) or isinstance(message_id, bool):
        raise ValidationError(
            f"{where}.id must be a string or integer", hint="Use your message ids as strings."
        )
    message_id = validate_identifier(f"{where}.id", str(message_id))
    created_at = message.get("created_at")
    if created_at is not None:
        if not isinstance(created_at, str):
            raise ValidationError(
                f"{where}.created_at must be an ISO 8601 string",
                hint="e.g. '2023-05-08T13:56:00'.",
            )
        created_at = iso(check_timestamp(f"{where}.created_at", created_at))
    return NormalizedMessage(
        role=role, text=text, id=message_id, name=name, images=images, created_at=created_at
    )


def _content(where: str, content: Any) -> tuple[str, tuple[dict[str, Any], ...]]:
    if isinstance(content, str):
        return check_text(f"{where}.content", content), ()
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, list):
        raise ValidationError(
            f"{where}.content must be a string or a list of parts, got {type(content).__name__}",
            hint=_HINT,
        )
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(check_text(f"{where}.content[{j}].text", part["text"]))
        elif kind == "image_url" and part.get("image_url"):
            images.append(dict(part))
        else:
            raise ValidationError(
                f"{where}.content[{j}] must be {{'type': 'text', 'text': str}} or "
                "{'type': 'image_url', 'image_url': ...}",
                hint=_HINT,
            )
    return "\n".join(texts), tuple(images)
