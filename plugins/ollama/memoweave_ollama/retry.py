"""Retries with exponential backoff, and translation of ``ollama`` client errors.

:func:`call_with_retries` runs one request, retrying on connection errors, timeouts and
HTTP 408/409/429/5xx (``retry_backoff * 2**n`` seconds, capped by ``retry_max_delay``).
Every other failure, and the last one, is raised as the given :class:`ProviderError`
subclass whose message carries the server's own error text (Ollama answers
``{"error": "..."}``); ``details`` holds ``status``, ``url``, ``attempts``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from memoweave.errors import ProviderError

T = TypeVar("T")
RETRYABLE_STATUS = frozenset({408, 409, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry."""

    max_retries: int = 2
    backoff: float = 0.5
    max_delay: float = 8.0
    timeout: float = 120.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        return min(self.backoff * (2**attempt), self.max_delay)


def server_message(error: object) -> str:
    """The human-readable text of ``ResponseError.error`` (a string, or a parsed body)."""
    if isinstance(error, dict):
        inner = error.get("error", error.get("message"))
        if isinstance(inner, dict):
            inner = inner.get("message", inner)
        return str(inner if inner is not None else json.dumps(error))
    return str(error).strip() or "(empty response)"


def _hint(status: int, model: str, url: str) -> str | None:
    if status == 404:
        return f"Pull the model first (ollama pull {model}) or fix config.model; check {url}."
    if status == 400:
        return (
            "The server rejected the request; see its message (model capabilities such as "
            "tools, images or embeddings, option names, context length)."
        )
    if status in (401, 403):
        return "Check config.api_key / $OLLAMA_API_KEY and the proxy in front of Ollama."
    if status == 429:
        return "The server is busy or rate limited: raise max_retries / retry_backoff."
    if status >= 500:
        return "The server failed (out of memory? model crash?); retry later or check its logs."
    return None


def _kind(exc: BaseException) -> str | None:
    """``"timeout"``, ``"connection"``, ``"status"``, ``"response"`` or None (not ours)."""
    import httpx
    import ollama
    import pydantic

    if isinstance(exc, ollama.ResponseError):
        return "status"
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    if isinstance(exc, (ConnectionError, httpx.TransportError)):
        return "connection"
    if isinstance(exc, (pydantic.ValidationError, ValueError, httpx.HTTPError)):
        return "response"
    return None


def translate(
    exc: BaseException,
    error_cls: type[ProviderError],
    *,
    what: str,
    url: str,
    model: str,
    timeout: float,
    attempts: int,
) -> ProviderError:
    """Map an ``ollama``/``httpx`` exception to ``error_cls`` with the server's message."""
    details: dict[str, Any] = {"url": url, "attempts": attempts, "model": model}
    kind = _kind(exc)
    if kind == "timeout":
        return error_cls(
            f"{what}: no answer from {url} within {timeout:g}s ({attempts} attempt(s))",
            hint="Raise config.timeout (the first call loads the model), lower max_tokens or "
            "use a smaller model.",
            details=details | {"timeout": timeout},
        )
    if kind == "connection":
        return error_cls(
            f"{what}: cannot connect to Ollama at {url}: {type(exc).__name__}: {exc}",
            hint=f"Is `ollama serve` running and reachable at {url}? Check config.host or "
            "$OLLAMA_HOST.",
            details=details,
        )
    if kind == "status":
        status = int(getattr(exc, "status_code", -1))
        message = server_message(getattr(exc, "error", str(exc)))
        where = f"HTTP {status} from {url}" if status > 0 else f"error from {url}"
        return error_cls(
            f"{what}: {where}: {message}",
            hint=_hint(status, model, url),
            details=details | {"status": status, "server_message": message},
        )
    return error_cls(
        f"{what}: unexpected answer from {url}: {type(exc).__name__}: {exc}",
        hint="Is this an Ollama server? Check config.host (no /api or /v1 suffix).",
        details=details,
    )


def _retryable(exc: BaseException) -> bool:
    kind = _kind(exc)
    if kind in ("timeout", "connection"):
        return True
    if kind == "status":
        status = int(getattr(exc, "status_code", -1))
        return status in RETRYABLE_STATUS or status >= 500
    return False


def call_with_retries(
    request: Callable[[], T],
    policy: RetryPolicy,
    error_cls: type[ProviderError],
    *,
    what: str,
    url: str,
    model: str,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run ``request`` with retries; raise ``error_cls`` on the final failure."""
    attempt = 0
    while True:
        try:
            return request()
        except Exception as exc:
            if _kind(exc) is None:
                raise
            if attempt >= policy.max_retries or not _retryable(exc):
                raise translate(
                    exc,
                    error_cls,
                    what=what,
                    url=url,
                    model=model,
                    timeout=policy.timeout,
                    attempts=attempt + 1,
                ) from exc
            sleep(policy.delay(attempt))
            attempt += 1


__all__ = ["RETRYABLE_STATUS", "RetryPolicy", "call_with_retries", "server_message", "translate"]
