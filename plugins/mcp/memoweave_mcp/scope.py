"""Which memories an MCP tool call works on: never decided by the tool's arguments.

The scope is the configured one (``server.mcp`` in the YAML, overridden by ``memoweave
mcp --user-id ...``). Over streamable HTTP the caller's API key adds the ids its grant
pins to one value (a key granted ``user_id: [alice]`` works on Alice's memories), and the
resulting scope must lie inside the grant. The tools take no scope argument at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from memoweave.access import LOCAL, KeyRing, Principal, presented_key
from memoweave.errors import ValidationError
from memoweave.memory.scope import Scope


@dataclass(frozen=True)
class ToolScope:
    """The fixed scope of a session (``base``) and, over HTTP, the keys that may call."""

    base: Scope | None = None
    keyring: KeyRing | None = None

    def resolve(self, headers: Mapping[str, str] | None) -> tuple[Principal, dict[str, str]]:
        """The caller and the scope of one tool call (``headers``: the HTTP request's, or
        ``None`` on stdio and in memory).

        Raises:
            Unauthorized: over HTTP with keys configured, no valid key.
            Forbidden: the scope is outside the key's grant.
            ValidationError: no scope at all.
        """
        principal = LOCAL
        scope = dict(self.base.as_dict()) if self.base else {}
        if self.keyring is not None and headers is not None:
            principal = self.keyring.authenticate(
                presented_key({k.lower(): v for k, v in headers.items()})
            )
            scope = {**principal.pinned_scope(), **scope}
        if not scope:
            raise ValidationError(
                "this MCP server has no scope to work in",
                hint="Start it with --user-id (or set server.mcp.user_id), or use a key "
                "whose grant names one user.",
            )
        principal.check_scope(scope)
        return principal, scope
