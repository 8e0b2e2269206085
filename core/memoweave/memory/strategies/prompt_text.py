"""Rendering an extraction request into compact prompt text.

Existing memories are shown under short integer numbers (never UUIDs: they cost tokens and
models garble them); :class:`Numbered` maps the numbers back to ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memoweave.memory.actions import ExistingMemory
from memoweave.memory.messages import NormalizedMessage

MAX_WINDOW_CHARS = 300


def speaker(message: NormalizedMessage) -> str:
    """The name a message is attributed to: its ``name``, else its role."""
    return message.name or message.role.capitalize()


def observation_date(moment: datetime) -> str:
    """``2023-05-08 (Monday)``."""
    return f"{moment.date().isoformat()} ({moment.strftime('%A')})"


@dataclass(frozen=True)
class Numbered:
    """Existing memories numbered from 1 for the prompt."""

    memories: tuple[ExistingMemory, ...]

    def render(self) -> str:
        if not self.memories:
            return "(none)"
        return "\n".join(f"{n}. {m.text}" for n, m in enumerate(self.memories, start=1))

    def id_of(self, number: int | str | None) -> str | None:
        """The memory id behind a number the model answered; ``None`` if invalid."""
        try:
            index = int(number) - 1  # type: ignore[arg-type]  # None fails below, as junk does
        except (TypeError, ValueError):
            return None
        return self.memories[index].id if 0 <= index < len(self.memories) else None


def render_window(window: Sequence[NormalizedMessage]) -> str:
    """Earlier messages, one line each, long ones shortened."""
    if not window:
        return "(none)"
    lines = []
    for m in window:
        text = " ".join(m.text.split())
        if len(text) > MAX_WINDOW_CHARS:
            text = text[:MAX_WINDOW_CHARS] + "…"
        lines.append(f"{speaker(m)}: {text}")
    return "\n".join(lines)


def render_new(messages: Sequence[NormalizedMessage]) -> str:
    """The new messages, numbered from 1, system messages left out."""
    return "\n".join(
        f"[{n}] {speaker(m)}: {' '.join(m.text.split())}"
        for n, m in enumerate(messages, start=1)
        if m.role != "system" and m.text.strip()
    )


def system_text(messages: Sequence[NormalizedMessage]) -> str:
    """The text of the request's system messages (extra instructions from the app)."""
    return "\n".join(m.text for m in messages if m.role == "system" and m.text.strip())
