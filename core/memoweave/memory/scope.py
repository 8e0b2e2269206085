"""Scopes (user / agent / run) and identifier validation.

Every memory belongs to a scope: a combination of ``user_id``, ``agent_id`` and ``run_id``
(at least one). Reads and writes are always filtered on the caller's scope, so one scope
never sees another's memories.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memoweave.errors import ValidationError
from memoweave.filters import And, Comparison, FilterNode

IDENTITY_KEYS: tuple[str, ...] = ("user_id", "agent_id", "run_id")
MAX_ID_LENGTH = 128
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories an id may not contain: control, format (zero-width space, bidi
marks), surrogate, private-use, unassigned, line and paragraph separators."""


def validate_identifier(name: str, value: Any) -> str:
    """Return ``value`` if it is a valid id (non-empty str, <= 128 chars, no padding, no
    control or invisible characters); raise ``ValidationError`` otherwise. Ids are never
    rewritten: two ids are the same scope only if they are the same string."""
    if not isinstance(value, str):
        raise ValidationError(
            f"{name} must be a string, got {type(value).__name__}",
            hint=f"Pass {name} as a string, e.g. {name}='alice'.",
        )
    if not value or value.strip() != value:
        raise ValidationError(
            f"{name} must be non-empty and have no leading or trailing whitespace: {value!r}",
            hint=f"Strip {name} before passing it.",
        )
    if len(value) > MAX_ID_LENGTH:
        raise ValidationError(
            f"{name} is {len(value)} characters long; the limit is {MAX_ID_LENGTH}",
            hint=f"Use a shorter {name} (a hash or database key).",
        )
    bad = next((c for c in value if unicodedata.category(c) in _INVISIBLE), None)
    if bad is not None:
        raise ValidationError(
            f"{name} contains the control or invisible character U+{ord(bad):04X}: {value!r}",
            hint=f"Use printable characters in {name}.",
        )
    return value


def scope_key(user_id: str | None, agent_id: str | None, run_id: str | None) -> str:
    """An unambiguous string naming the scope with these ids: the JSON array
    ``[user_id, agent_id, run_id]`` (``null`` for an unset id). Different scopes never
    share a key, whatever characters their ids contain."""
    return json.dumps([user_id, agent_id, run_id], ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Scope:
    """The identity of a set of memories; at least one field is set."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    @classmethod
    def of(
        cls,
        *,
        user_id: Any = None,
        agent_id: Any = None,
        run_id: Any = None,
        operation: str = "this call",
    ) -> Scope:
        """Validate the ids and require at least one."""
        values = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        checked = {k: validate_identifier(k, v) for k, v in values.items() if v is not None}
        if not checked:
            raise ValidationError(
                f"{operation} needs at least one of user_id, agent_id or run_id",
                hint="Pass user_id='...' (or agent_id / run_id) to scope the memories.",
            )
        return cls(**checked)

    @classmethod
    def from_filters(cls, filters: Mapping[str, Any] | None, *, operation: str) -> Scope:
        """Take the scope from the top-level identity keys of a filter dict."""
        filters = filters or {}
        values: dict[str, Any] = {}
        for key in IDENTITY_KEYS:
            if key in filters:
                value = filters[key]
                if isinstance(value, Mapping) and set(value) == {"eq"}:
                    value = value["eq"]
                if not isinstance(value, str):
                    raise ValidationError(
                        f"filters.{key} must be a plain string to scope {operation}",
                        hint=f"Write filters={{'{key}': 'alice', ...}}; other operators "
                        "are not allowed on identity keys.",
                    )
                values[key] = value
        return cls.of(**values, operation=operation)

    def as_dict(self) -> dict[str, str]:
        """The set identity keys."""
        return {
            k: v
            for k, v in (
                ("user_id", self.user_id),
                ("agent_id", self.agent_id),
                ("run_id", self.run_id),
            )
            if v is not None
        }

    def filter(self) -> FilterNode:
        """A filter matching exactly this scope's memories (each set key equal)."""
        return And(tuple(Comparison(k, "eq", v) for k, v in self.as_dict().items()))

    def key(self) -> str:
        """A stable, unambiguous string naming exactly this scope (see :func:`scope_key`)."""
        return scope_key(self.user_id, self.agent_id, self.run_id)

    def contains(self, payload: Mapping[str, Any]) -> bool:
        """Whether a stored payload belongs to this scope."""
        return all(payload.get(k) == v for k, v in self.as_dict().items())
