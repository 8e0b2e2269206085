"""Retries with exponential backoff, and translation of SDK errors into memoweave errors.

:func:`call_with_retries` runs one request, retrying on connection errors, timeouts and
HTTP 408/409/429/5xx (``retry_backoff * 2**n`` seconds, capped by ``retry_max_delay``;
a server's ``Retry-After`` wins when it is within the cap). Every other failure, and the
last one, is raised as the given :class:`ProviderError` subclass whose message carries the
server's own error text; ``details`` holds ``status``, ``body``, ``url``, ``attempts``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from memoweave.errors import ProviderError

T = TypeVar("T")
RETRYABLE_STATUS = frozenset({408, 409, 429})

_HINTS: dict[int, str] = {
    400: "The server rejected the request; see its message (model limits, unsupported "
    "parameters such as response_format or dimensions).",
    401: "Check the API key (config.api_key or $OPENAI_API_KEY).",
    403: "The API key lacks access to this model or endpoint.",
    404: "Check the model name and base_url (most servers expect a /v1 suffix).",
    422: "The server rejected a request field; see its message (e.g. set "
    "structured_output to a mode this server supports).",
    429: "Rate limited or out of quota: raise max_retries / retry_backoff or check billing.",
}


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry."""

    max_retries: int = 2
    backoff: float = 0.5
    max_delay: float = 8.0
    timeout: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        if retry_after is not None and 0 <= retry_after <= self.max_delay:
            return retry_after
        return min(self.backoff * (2**attempt), self.max_delay)


def server_message(body: object, fallback: str) -> str:
    """The human-readable error text of an OpenAI-style (or FastAPI-style) error body."""
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str) and error:
            return error
        if body.get("message"):
            return str(body["message"])
        detail = body.get("detail")
        if isinstance(detail, list):  # FastAPI / pydantic validation errors
            parts = [
                f"{'.'.join(str(p) for p in d.get('loc', []))}: {d.get('msg', '')}"
                for d in detail
                if isinstance(d, dict)
            ]
            return "; ".join(parts) or fallback
        if detail:
            return str(detail)
    if isinstance(body, str) and body.strip():
        return body.strip()
    return fallback


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return float(value) * scale
            except ValueError:
                return None
    return None


def translate(
    exc: Exception,
    error_cls: type[ProviderError],
    *,
    what: str,
    url: str,
    timeout: float,
    attempts: int,
) -> ProviderError:
    """Map an ``openai`` SDK exception to ``error_cls`` with the server's message."""
    import openai

    details: dict[str, Any] = {"url": url, "attempts": attempts}
    if isinstance(exc, openai.APITimeoutError):
        return error_cls(
            f"{what}: no answer from {url} within {timeout:g}s ({attempts} attempt(s))",
            hint="Raise config.timeout, use a smaller model or a lower max_tokens.",
            details=details | {"timeout": timeout},
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return error_cls(
            f"{what}: cannot connect to {url}: {type(cause).__name__}: {cause}",
            hint=f"Is the server running and reachable at {url}? Check config.base_url.",
            details=details,
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = server_message(exc.body, exc.message)
        hint = _HINTS.get(status) or (
            "The server failed; retry later or check its logs." if status >= 500 else None
        )
        return error_cls(
            f"{what}: HTTP {status} from {url}: {message}",
            hint=hint,
            details=details | {"status": status, "body": exc.body},
        )
    return error_cls(f"{what}: {type(exc).__name__}: {exc}", details=details)


def _message_of(exc: Exception) -> str:
    import openai

    if isinstance(exc, openai.APIStatusError):
        return server_message(exc.body, exc.message)
    return str(exc)


def _retryable(exc: Exception) -> bool:
    import openai

    if isinstance(exc, openai.APIConnectionError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return False


def call_with_retries(
    request: Callable[[], T],
    policy: RetryPolicy,
    error_cls: type[ProviderError],
    *,
    what: str,
    url: str,
    permanent: Callable[[str], bool] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run ``request`` with retries; raise ``error_cls`` on the final failure.

    ``permanent(server_message)`` returning True marks an otherwise retryable HTTP error as
    final (e.g. a server answering 500 to a request field it does not know).
    """
    import openai

    attempt = 0
    while True:
        try:
            return request()
        except openai.OpenAIError as exc:
            if (
                attempt >= policy.max_retries
                or not _retryable(exc)
                or (permanent is not None and permanent(_message_of(exc)))
            ):
                raise translate(
                    exc,
                    error_cls,
                    what=what,
                    url=url,
                    timeout=policy.timeout,
                    attempts=attempt + 1,
                ) from exc
            sleep(policy.delay(attempt, _retry_after(exc)))
            attempt += 1


__all__ = ["RetryPolicy", "call_with_retries", "server_message", "translate"]
