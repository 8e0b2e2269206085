"""The ``server`` section: what ``memoweave serve`` (REST) and ``memoweave mcp`` read.

API keys are kept only as SHA-256 hashes. Write a key either as its hash (``sha256:``,
what ``memoweave new-key`` prints) or as the key itself, normally from the environment
(``key: ${APP_KEY}``): it is hashed while the configuration is read and the plaintext is
not kept (not in the model, its repr or any error message).

A key's ``grant`` names, per identity key, the values it may use (a list, or ``"*"`` for
any value); a ``member`` request must set every granted key to an allowed value, so it
only ever reads or writes memories inside the grant. ``admin`` keys may use any scope,
``reset`` and unscoped deletes. See :mod:`memoweave.access`.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal, Union

from pydantic import (
    Field,
    ModelWrapValidatorHandler,
    SecretStr,
    field_validator,
    model_validator,
)

from memoweave.config.base import ConfigModel

MIN_KEY_CHARS = 16
_SHA256 = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

IdentityKey = Literal["user_id", "agent_id", "run_id"]
GrantValues = Union[Literal["*"], list[str]]


def hash_key(key: str) -> str:
    """The SHA-256 hex digest a key is stored and looked up as."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _mask_key(entry: Any) -> Any:
    """``entry`` with a plaintext ``key`` wrapped in ``SecretStr``, before any validator
    runs: pydantic errors quote their input, and then show ``SecretStr('**********')``."""
    if isinstance(entry, dict) and isinstance(entry.get("key"), str):
        return {**entry, "key": SecretStr(entry["key"])}
    return entry


class ApiKeyConfig(ConfigModel):
    """One API key: its name (shown in logs), its hash, its role and its grant."""

    name: str = Field(description="Shown in logs and errors instead of the key.")
    sha256: str | None = Field(default=None, description="SHA-256 hex digest of the key.")
    key: SecretStr | None = Field(
        default=None, description="The key itself (e.g. ${APP_KEY}); hashed on load, not kept."
    )
    role: Literal["member", "admin"] = "member"
    grant: dict[IdentityKey, GrantValues] = Field(
        default_factory=dict,
        description="Per identity key, the values this key may use (a list) or '*' for any.",
    )

    @model_validator(mode="wrap")
    @classmethod
    def _wrap_plaintext(cls, data: Any, handler: ModelWrapValidatorHandler[ApiKeyConfig]) -> Any:
        return handler(_mask_key(data))

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError("use 1-64 letters, digits, '_', '.' or '-'")
        return value

    @field_validator("key")
    @classmethod
    def _check_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_KEY_CHARS:
            raise ValueError(
                f"the key is shorter than {MIN_KEY_CHARS} characters; "
                "make one with `memoweave new-key`"
            )
        return value

    @field_validator("sha256")
    @classmethod
    def _check_sha256(cls, value: str | None) -> str | None:
        if value is not None and not _SHA256.fullmatch(value):
            raise ValueError("expected 64 lowercase hex digits (see `memoweave new-key`)")
        return value

    @field_validator("grant")
    @classmethod
    def _check_grant(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name, allowed in value.items():
            if isinstance(allowed, list) and (
                not allowed or any(not isinstance(v, str) or not v for v in allowed)
            ):
                raise ValueError(f"{name}: list the allowed ids (non-empty strings), or '*'")
        return value

    @model_validator(mode="after")
    def _hash_plaintext(self) -> ApiKeyConfig:
        if (self.key is None) == (self.sha256 is None):
            raise ValueError(f"key {self.name!r}: give exactly one of 'key' or 'sha256'")
        if self.key is not None:
            self.sha256 = hash_key(self.key.get_secret_value())
            self.key = None
        if self.role == "member" and not self.grant:
            raise ValueError(
                f"key {self.name!r}: a member key needs a grant, e.g. grant: {{user_id: [alice]}}"
            )
        return self


class McpScopeConfig(ConfigModel):
    """The scope ``memoweave mcp`` works in when its command line names none, and whether
    its ``search_memories`` asks the configured reranker."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    rerank: bool = Field(
        default=False,
        description="search_memories reranks with the reranker section (its order and, "
        "with a cross-encoder, scores that tell an answer from a near miss).",
    )

    def scope_ids(self) -> dict[str, str]:
        """The ids it sets (``user_id`` / ``agent_id`` / ``run_id``)."""
        ids = {"user_id": self.user_id, "agent_id": self.agent_id, "run_id": self.run_id}
        return {k: v for k, v in ids.items() if v is not None}


class ServerConfig(ConfigModel):
    """How the REST and MCP servers listen, authenticate and log."""

    host: str = Field(
        default="127.0.0.1",
        min_length=1,
        description="Interface to bind; with no keys configured the servers bind 127.0.0.1.",
    )
    port: int = Field(default=8765, ge=1, le=65535)
    keys: list[ApiKeyConfig] = Field(default_factory=list)
    cors_origins: list[str] = Field(
        default_factory=list, description="Browser origins allowed to call the REST API."
    )
    log_format: Literal["text", "json"] = "text"
    mcp: McpScopeConfig = Field(default_factory=lambda: McpScopeConfig())

    @model_validator(mode="wrap")
    @classmethod
    def _wrap_plaintext(cls, data: Any, handler: ModelWrapValidatorHandler[ServerConfig]) -> Any:
        if isinstance(data, dict) and isinstance(data.get("keys"), list):
            data = {**data, "keys": [_mask_key(entry) for entry in data["keys"]]}
        return handler(data)

    @model_validator(mode="after")
    def _unique_keys(self) -> ServerConfig:
        names = [k.name for k in self.keys]
        hashes = [k.sha256 for k in self.keys]
        if len(set(names)) != len(names):
            raise ValueError("two keys share a name")
        if len(set(hashes)) != len(hashes):
            raise ValueError("two keys are the same key")
        return self
