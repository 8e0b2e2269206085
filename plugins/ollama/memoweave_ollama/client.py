"""Building the official ``ollama.Client`` from a config (lazy SDK import).

The host is ``config.host``, else ``$OLLAMA_HOST``, else ``http://127.0.0.1:11434``, read
when the provider is created. It is normalised the way the Ollama CLI does it (a bare
``host`` or ``host:port`` gets ``http://`` and the default port 11434) so error messages
show the URL actually used.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from memoweave.errors import ConfigError
from memoweave.providers.sdk_clients import SdkClients
from memoweave_ollama.config import OllamaConnectionConfig

DEFAULT_HOST = "http://127.0.0.1:11434"
DEFAULT_PORT = 11434
HOST_ENV = "OLLAMA_HOST"


def normalize_host(raw: str) -> str:
    """``gpu:11434`` → ``http://gpu:11434``; ``0.0.0.0`` (a bind address) → 127.0.0.1.

    Raises ConfigError for values that are not a host, host:port or http(s) URL.
    """
    text = raw.strip().rstrip("/")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "http", text
    if scheme not in ("http", "https"):
        raise ConfigError(
            f"unsupported Ollama host {raw!r}",
            hint="Use host, host:port or an http(s):// URL, e.g. http://localhost:11434.",
            details={"path": "config.host", "value": raw},
        )
    try:
        split = urlsplit(f"{scheme}://{rest}")
        port = split.port
    except ValueError as exc:
        raise ConfigError(
            f"invalid Ollama host {raw!r}: {exc}",
            hint="Use host, host:port or an http(s):// URL, e.g. http://localhost:11434.",
            details={"path": "config.host", "value": raw},
        ) from exc
    host = split.hostname or "127.0.0.1"
    if host in ("0.0.0.0", "::"):  # OLLAMA_HOST is often a server bind address
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    if port is None:
        port = DEFAULT_PORT if not sep else (443 if scheme == "https" else 80)
    path = split.path.strip("/")
    return f"{scheme}://{host}:{port}" + (f"/{path}" if path else "")


def resolve_host(config: OllamaConnectionConfig) -> str:
    """The server URL for ``config`` (config, then ``$OLLAMA_HOST``, then the default)."""
    raw = config.host or os.environ.get(HOST_ENV, "").strip() or DEFAULT_HOST
    return normalize_host(raw)


def build_client(config: OllamaConnectionConfig, *, asynchronous: bool = False) -> tuple[Any, str]:
    """An ``ollama.Client`` (``AsyncClient`` when ``asynchronous``) for ``config`` and the
    URL it talks to."""
    url = resolve_host(config)
    try:
        import ollama
    except ImportError as exc:  # pragma: no cover - ollama is a declared dependency
        raise ConfigError(
            "the ollama package is not installed",
            hint="pip install memoweave-ollama (it depends on ollama).",
        ) from exc
    headers = dict(config.headers or {})
    if config.api_key is not None and config.api_key.get_secret_value():
        headers["Authorization"] = f"Bearer {config.api_key.get_secret_value()}"
    cls = ollama.AsyncClient if asynchronous else ollama.Client
    client = cls(host=url, timeout=config.timeout, headers=headers or None)
    return client, url


class OllamaTransport(SdkClients):
    """The requests a provider makes, each with its native async twin (``chat`` →
    ``achat``): the sync client built now, one ``AsyncClient`` per event loop on use."""

    def __init__(self, config: OllamaConnectionConfig) -> None:
        client, self.url = build_client(config)
        super().__init__(client, lambda: build_client(config, asynchronous=True)[0])

    def chat(self, **request: Any) -> Any:
        """``Client.chat(**request)``."""
        return self.client.chat(**request)

    async def achat(self, **request: Any) -> Any:
        """``await AsyncClient.chat(**request)``."""
        return await self.async_client().chat(**request)

    def embed(self, **request: Any) -> Any:
        """``Client.embed(**request)``."""
        return self.client.embed(**request)

    async def aembed(self, **request: Any) -> Any:
        """``await AsyncClient.embed(**request)``."""
        return await self.async_client().embed(**request)


__all__ = [
    "DEFAULT_HOST",
    "HOST_ENV",
    "OllamaTransport",
    "build_client",
    "normalize_host",
    "resolve_host",
]
