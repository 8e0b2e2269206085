"""The memoweave error hierarchy.

Every error raised by a public entry point is a :class:`MemoweaveError`. Each class has a
stable ``code`` (a snake_case string that never changes between releases) and every
instance carries a one-line ``hint`` saying how to fix the problem. ``str(error)`` is
``"<message> (hint: <hint>)"`` so logs show both.
"""

from __future__ import annotations

from typing import Any


class MemoweaveError(Exception):
    """Base class of all memoweave errors.

    Attributes:
        code: stable machine-readable error code.
        message: what went wrong, one line.
        hint: how to fix it, one line.
        details: optional structured context (paths, names, provider output).
    """

    code: str = "memoweave_error"
    default_hint: str = "See the memoweave documentation."

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        self.message = message
        self.hint = hint or self.default_hint
        self.details: dict[str, Any] = dict(details or {})
        super().__init__(message)

    def __str__(self) -> str:
        return f"{self.message} (hint: {self.hint})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view, used by the CLI and the REST server."""
        return {
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
            "details": self.details,
        }


class ValidationError(MemoweaveError, ValueError):
    """Input to a public entry point is malformed (wrong type, empty, too long...)."""

    code = "validation_error"
    default_hint = "Check the argument types and values against the API documentation."


class FilterError(ValidationError):
    """A filter expression is invalid; ``details["path"]`` points at the offending node."""

    code = "invalid_filter"
    default_hint = (
        "Use {field: value}, {field: {op: value}} with ops eq ne in nin gt gte lt lte "
        "contains icontains, '*' for presence, and AND/OR/NOT lists."
    )


class ConfigError(MemoweaveError):
    """Configuration is invalid; ``details`` carries the dotted ``path`` and the ``file``."""

    code = "config_error"
    default_hint = "Fix the configuration value named in the message."


class ProviderNotFound(ConfigError):
    """No installed plugin registers the requested provider name for that kind."""

    code = "provider_not_found"
    default_hint = "Install the plugin that provides it, e.g. pip install memoweave-<name>."


class PluginError(MemoweaveError):
    """A plugin could not be loaded or registered something invalid."""

    code = "plugin_error"
    default_hint = "Upgrade or uninstall the plugin named in the message."


class DuplicateProviderError(PluginError):
    """Two plugins register the same provider name for the same kind."""

    code = "duplicate_provider"
    default_hint = "Uninstall one of the two distributions, or disable one with MEMOWEAVE_PLUGINS."


class ProviderError(MemoweaveError):
    """Base class of errors raised by providers (LLM, embedder, store, reranker)."""

    code = "provider_error"


class LLMError(ProviderError):
    """The LLM failed: unreachable, rejected the request, or returned unusable output."""

    code = "llm_error"
    default_hint = "Check the LLM server URL, model name and API key; see the server's message."


class EmbeddingError(ProviderError):
    """The embedder failed or returned vectors of the wrong shape."""

    code = "embedding_error"
    default_hint = "Check the embedder configuration (model, URL, dims) and the server's message."


class VectorStoreError(ProviderError):
    """The vector store failed or was used inconsistently (e.g. a dimension mismatch)."""

    code = "vector_store_error"
    default_hint = "Check the vector store configuration and that the engine is reachable."


class GraphStoreError(ProviderError):
    """The graph store failed or was given invalid entities or relations."""

    code = "graph_store_error"
    default_hint = "Check the graph store configuration and that the engine is reachable."


class RerankerError(ProviderError):
    """The reranker failed."""

    code = "reranker_error"
    default_hint = "Check the reranker configuration and its model or LLM."


class NotFound(MemoweaveError, LookupError):
    """The requested object (memory, record, collection) does not exist in this scope."""

    code = "not_found"
    default_hint = "Check the id; list existing ones with get_all()."


class Unauthorized(MemoweaveError):
    """A server request carried no API key, or one that no configured key matches."""

    code = "unauthorized"
    default_hint = "Send the key as 'Authorization: Bearer <key>' or 'X-API-Key: <key>'."


class Forbidden(MemoweaveError):
    """The API key is valid but its grant or role does not cover the request."""

    code = "forbidden"
    default_hint = "Use a scope inside the key's grant, or a key with the admin role."


class ServerError(MemoweaveError):
    """A memoweave server could not be reached, or answered with an unexpected error."""

    code = "server_error"
    default_hint = "Check the server URL (--server / MEMOWEAVE_SERVER) and that it is running."


class ConsistencyError(MemoweaveError):
    """The vector store and the history disagree when a memory opens (one was deleted,
    moved or replaced); nothing was changed."""

    code = "store_history_mismatch"
    default_hint = "Run `memoweave doctor` to see what disagrees, `--repair` to fix it."


class HistoryError(MemoweaveError):
    """The history database failed or is locked."""

    code = "history_error"
    default_hint = (
        "Check that the history database path is writable and not used by another process."
    )


__all__ = [
    "ConfigError",
    "ConsistencyError",
    "DuplicateProviderError",
    "EmbeddingError",
    "FilterError",
    "Forbidden",
    "GraphStoreError",
    "HistoryError",
    "LLMError",
    "MemoweaveError",
    "NotFound",
    "PluginError",
    "ProviderError",
    "ProviderNotFound",
    "RerankerError",
    "ServerError",
    "Unauthorized",
    "ValidationError",
    "VectorStoreError",
]
