"""API keys, grants and roles: who may touch which memories through a server.

The REST and MCP servers authenticate every request to a :class:`Principal` with
:meth:`KeyRing.authenticate`, then ask it before touching anything:

- :meth:`Principal.check_scope` before a scoped call (``add``, ``search``, ``list``,
  ``delete_all``): a member's request must set every identity key of its grant to an
  allowed value, else :class:`~memoweave.errors.Forbidden`. Since every read and write is
  filtered on the request's scope, a member only ever sees memories inside its grant.
- :meth:`Principal.can_see` for a by-id call: the stored memory (or its history events)
  must lie inside the grant; callers answer ``NotFound`` otherwise, exactly as for an id
  that does not exist, so existence never leaks.
- :meth:`Principal.require_admin` for ``reset`` and unscoped deletes.

With no key configured, :meth:`KeyRing.authenticate` returns :data:`LOCAL` (an admin) and
the servers bind 127.0.0.1 only. Keys are compared by SHA-256 hash; the plaintext a client
sends is never stored, logged or echoed.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memoweave.config.server import ApiKeyConfig, ServerConfig, hash_key
from memoweave.errors import Forbidden, Unauthorized
from memoweave.memory.scope import IDENTITY_KEYS

KEY_PREFIX = "mw_"


def new_key() -> str:
    """A fresh random API key (256 bits, URL-safe)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key a request carries: ``Authorization: Bearer <key>`` or ``X-API-Key: <key>``.

    ``headers`` must be case-insensitive or lower-cased (as ASGI and httpx give them).
    """
    auth = headers.get("authorization")
    if auth:
        scheme, _, token = auth.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
        return None
    key = headers.get("x-api-key")
    return key.strip() if key and key.strip() else None


@dataclass(frozen=True)
class Principal:
    """The caller of one request: a configured key's name, role and grant.

    ``grant`` maps an identity key to the allowed values (``None``: any value).
    """

    name: str
    role: str
    grant: Mapping[str, frozenset[str] | None] = field(default_factory=dict)

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def check_scope(self, scope: Mapping[str, Any]) -> None:
        """Raise ``Forbidden`` unless the scope ``{user_id, agent_id, run_id}`` (unset keys
        absent or ``None``) lies inside this key's grant."""
        if self.is_admin:
            return
        for key, allowed in self.grant.items():
            value = scope.get(key)
            if value is None:
                raise Forbidden(
                    f"key {self.name!r} must name {key} (its grant covers {self._describe(key)})",
                    hint=f"Pass {key} in the request.",
                )
            if allowed is not None and value not in allowed:
                raise Forbidden(
                    f"key {self.name!r} may not use {key}={value!r}",
                    hint=f"Use a {key} inside the key's grant ({self._describe(key)}).",
                )

    def can_see(self, record: Mapping[str, Any]) -> bool:
        """Whether a stored memory (or history event) with these identity keys is inside
        the grant."""
        if self.is_admin:
            return True
        for key, allowed in self.grant.items():
            value = record.get(key)
            if value is None or (allowed is not None and value not in allowed):
                return False
        return True

    def require_admin(self, action: str) -> None:
        """Raise ``Forbidden`` unless this is an admin key."""
        if not self.is_admin:
            raise Forbidden(
                f"{action} needs an admin key; key {self.name!r} is a {self.role}",
                hint="Use a key with role: admin.",
            )

    def pinned_scope(self) -> dict[str, str]:
        """The identity keys whose grant allows exactly one value, with that value."""
        return {
            key: next(iter(allowed))
            for key, allowed in self.grant.items()
            if allowed is not None and len(allowed) == 1
        }

    def _describe(self, key: str) -> str:
        allowed = self.grant.get(key)
        return "any value" if allowed is None else ", ".join(sorted(allowed))


LOCAL = Principal("local", "admin")
"""The caller when no key is configured (the servers then bind 127.0.0.1 only)."""


def _principal(spec: ApiKeyConfig) -> Principal:
    grant: dict[str, frozenset[str] | None] = {}
    for key in IDENTITY_KEYS:
        if key in spec.grant:
            values = spec.grant[key]
            grant[key] = None if values == "*" else frozenset(values)
    return Principal(spec.name, spec.role, grant)


class KeyRing:
    """The configured keys, looked up by the SHA-256 hash of what a client presents."""

    def __init__(self, keys: Iterable[ApiKeyConfig] = ()) -> None:
        self._by_hash = {spec.sha256: _principal(spec) for spec in keys}

    @classmethod
    def from_config(cls, server: ServerConfig) -> KeyRing:
        return cls(server.keys)

    @property
    def open(self) -> bool:
        """No key configured: every caller is :data:`LOCAL`."""
        return not self._by_hash

    def authenticate(self, key: str | None) -> Principal:
        """The principal of ``key``; :data:`LOCAL` when no key is configured.

        Raises:
            Unauthorized: keys are configured and ``key`` is missing or matches none.
        """
        if self.open:
            return LOCAL
        if key is None:
            raise Unauthorized("this server needs an API key")
        principal = self._by_hash.get(hash_key(key))
        if principal is None:
            raise Unauthorized("the API key is not valid")
        return principal

    def __repr__(self) -> str:
        return f"KeyRing({len(self._by_hash)} keys)"
