"""Building the ``openai`` SDK client from a :class:`ConnectionConfig` (lazy SDK import).

The API key is resolved when the provider is created: ``config.api_key``, else
``$OPENAI_API_KEY`` (``$AZURE_OPENAI_API_KEY`` for Azure). OpenAI itself requires a key
(:class:`ConfigError` otherwise); a custom ``base_url`` (local servers) gets a placeholder.
The SDK's own retries are disabled: :mod:`memoweave_openai.retry` does them.
:class:`OpenAITransport` holds the sync client and, made on first async use, one
``AsyncOpenAI`` (``AsyncAzureOpenAI``) per event loop with the same settings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlparse

from memoweave.errors import ConfigError
from memoweave.providers.sdk_clients import SdkClients
from memoweave_openai.config import ConnectionConfig

OPENAI_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "no-key-needed"

Flavor = Literal["openai", "azure", "compatible"]


@dataclass(frozen=True)
class Endpoint:
    """Where requests go: ``flavor`` selects defaults, ``url`` is shown in errors."""

    flavor: Flavor
    url: str

    @property
    def official(self) -> bool:
        """True for OpenAI and Azure OpenAI (full feature set, key required)."""
        return self.flavor in ("openai", "azure")


def resolve_endpoint(config: ConnectionConfig) -> Endpoint:
    """The endpoint of ``config`` (``$OPENAI_BASE_URL`` when ``base_url`` is unset)."""
    if config.azure_endpoint:
        return Endpoint("azure", config.azure_endpoint)
    url = config.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL
    url = url.rstrip("/")
    host = urlparse(url).hostname or ""
    return Endpoint("openai" if host == "api.openai.com" else "compatible", url)


def _api_key(config: ConnectionConfig, endpoint: Endpoint) -> str:
    if config.api_key is not None and config.api_key.get_secret_value():
        return config.api_key.get_secret_value()
    env = "AZURE_OPENAI_API_KEY" if endpoint.flavor == "azure" else "OPENAI_API_KEY"
    key = os.environ.get(env)
    if key:
        return key
    if endpoint.official:
        raise ConfigError(
            f"no API key for {endpoint.url}",
            hint=f"Set ${env} or config.api_key; for a local OpenAI-compatible server "
            "set config.base_url (e.g. http://localhost:8000/v1).",
            details={"path": "config.api_key", "env": env},
        )
    return PLACEHOLDER_KEY


def build_client(config: ConnectionConfig, *, asynchronous: bool = False) -> tuple[Any, Endpoint]:
    """An ``openai.OpenAI`` (or ``AzureOpenAI``; their ``Async`` classes when
    ``asynchronous``) client and its endpoint."""
    endpoint = resolve_endpoint(config)
    api_key = _api_key(config, endpoint)
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - openai is a declared dependency
        raise ConfigError(
            "the openai package is not installed",
            hint="pip install memoweave-openai (it depends on openai).",
        ) from exc
    common: dict[str, Any] = {
        "api_key": api_key,
        "organization": config.organization,
        "timeout": config.timeout,
        "max_retries": 0,
        "default_headers": config.default_headers,
    }
    if endpoint.flavor == "azure":
        api_version = config.api_version or os.environ.get("OPENAI_API_VERSION")
        if not api_version:
            raise ConfigError(
                "Azure OpenAI needs an API version",
                hint="Set config.api_version (e.g. 2024-10-21) or $OPENAI_API_VERSION.",
                details={"path": "config.api_version"},
            )
        azure = openai.AsyncAzureOpenAI if asynchronous else openai.AzureOpenAI
        client = azure(
            azure_endpoint=endpoint.url,
            azure_deployment=config.azure_deployment,
            api_version=api_version,
            **common,
        )
    else:
        plain = openai.AsyncOpenAI if asynchronous else openai.OpenAI
        client = plain(base_url=endpoint.url, project=config.project, **common)
    return client, endpoint


class OpenAITransport(SdkClients):
    """The requests a provider makes, each with its native async twin (``chat`` →
    ``achat``): the sync client built now (resolving the key), the async one per loop."""

    def __init__(self, config: ConnectionConfig) -> None:
        client, self.endpoint = build_client(config)
        super().__init__(client, lambda: build_client(config, asynchronous=True)[0])

    def chat(self, **params: Any) -> Any:
        """``client.chat.completions.create(**params)``."""
        return self.client.chat.completions.create(**params)

    async def achat(self, **params: Any) -> Any:
        """``await AsyncOpenAI.chat.completions.create(**params)``."""
        return await self.async_client().chat.completions.create(**params)

    def embeddings(self, **params: Any) -> Any:
        """``client.embeddings.create(**params)``."""
        return self.client.embeddings.create(**params)

    async def aembeddings(self, **params: Any) -> Any:
        """``await AsyncOpenAI.embeddings.create(**params)``."""
        return await self.async_client().embeddings.create(**params)


__all__ = [
    "OPENAI_URL",
    "PLACEHOLDER_KEY",
    "Endpoint",
    "OpenAITransport",
    "build_client",
    "resolve_endpoint",
]
