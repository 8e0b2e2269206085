"""The sample conversation that ships with the package (``sample_conversation.json``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from memoweave.errors import ValidationError

SAMPLE_FILE = "sample_conversation.json"


@dataclass(frozen=True)
class Turn:
    """One line of the conversation."""

    role: str
    text: str


@dataclass(frozen=True)
class Session:
    """One chat, observed at one moment (ISO 8601)."""

    observed_at: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class ChangedFact:
    """The fact that changes during the conversation: ``match`` finds the old memory's
    text, ``correction`` is what the offline demo writes over it with ``update``."""

    topic: str
    before: str
    after: str
    match: str
    correction: str


@dataclass(frozen=True)
class SampleConversation:
    """The whole sample: who speaks, the sessions, the changed fact, the demo's queries."""

    title: str
    user_id: str
    user_name: str
    assistant_name: str
    sessions: tuple[Session, ...]
    changed_fact: ChangedFact
    queries: tuple[str, ...]

    def exchanges(self, session: Session) -> list[list[dict[str, Any]]]:
        """The session as ``add`` calls: each user turn with the assistant's reply."""
        calls: list[list[dict[str, Any]]] = []
        for turn in session.turns:
            name = self.user_name if turn.role == "user" else self.assistant_name
            message = {"role": turn.role, "content": turn.text, "name": name}
            if turn.role == "user" or not calls:
                calls.append([message])
            else:
                calls[-1].append(message)
        return calls

    @property
    def turn_count(self) -> int:
        return sum(len(s.turns) for s in self.sessions)


def load_sample(path: str | Path | None = None) -> SampleConversation:
    """Read the packaged sample (or ``path``); ``ValidationError`` if it is malformed."""
    if path is None:
        text = resources.files("memoweave.demo").joinpath(SAMPLE_FILE).read_text("utf-8")
        where = SAMPLE_FILE
    else:
        text, where = Path(path).read_text(encoding="utf-8"), str(path)
    try:
        data = json.loads(text)
        return SampleConversation(
            title=data["title"],
            user_id=data["user"]["id"],
            user_name=data["user"]["name"],
            assistant_name=data["assistant"]["name"],
            sessions=tuple(
                Session(s["observed_at"], tuple(Turn(t["role"], t["text"]) for t in s["turns"]))
                for s in data["sessions"]
            ),
            changed_fact=ChangedFact(**data["changed_fact"]),
            queries=tuple(data["queries"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValidationError(
            f"{where}: malformed sample conversation: {type(exc).__name__}: {exc}",
            hint="Follow the layout of memoweave/demo/sample_conversation.json.",
        ) from exc
