"""How ``openai`` SDK errors are retried and reported (the loop is
:mod:`memoweave.providers.retry`).

:func:`call_openai` is the pipeline running one request, retrying on connection errors,
timeouts and HTTP 408/409/429/5xx (``retry_backoff * 2**n`` seconds, capped by
``retry_max_delay``; a server's ``Retry-After`` wins when it is within the cap). Every other
failure, and the last one, is raised as the given :class:`ProviderError` subclass whose
message carries the server's own error text; ``details`` holds ``status``, ``body``,
``url``, ``attempts``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from memoweave.errors import ProviderError
from memoweave.providers.retry import Failure, RetryPolicy, retryable_status, retrying
from memoweave.runtime.steps import Part, Steps

T = TypeVar("T")

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


def classify(exc: BaseException) -> Failure | None:
    """The :class:`Failure` of an ``openai`` SDK exception; None for any other exception."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return Failure("timeout", str(exc), retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return Failure("connection", f"{type(cause).__name__}: {cause}", retryable=True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        return Failure(
            "status",
            server_message(exc.body, exc.message),
            retryable=retryable_status(status),
            status=status,
            retry_after=_retry_after(exc),
            body=exc.body,
        )
    if isinstance(exc, openai.OpenAIError):
        return Failure("other", f"{type(exc).__name__}: {exc}", retryable=False)
    return None


def hint(failure: Failure, url: str) -> str | None:
    """The hint of ``failure`` for a server at ``url`` (None: the error class default)."""
    if failure.kind == "timeout":
        return "Raise config.timeout, use a smaller model or a lower max_tokens."
    if failure.kind == "connection":
        return f"Is the server running and reachable at {url}? Check config.base_url."
    if failure.kind == "status" and failure.status is not None:
        return _HINTS.get(failure.status) or (
            "The server failed; retry later or check its logs." if failure.status >= 500 else None
        )
    return None


def call_openai(
    request: Callable[[], Part],
    policy: RetryPolicy,
    error_cls: type[ProviderError],
    *,
    what: str,
    url: str,
    permanent: Callable[[str], bool] | None = None,
) -> Steps[Any]:
    """The pipeline running the step ``request()`` with retries; raises ``error_cls`` on
    the final failure.

    ``permanent(server_message)`` returning True marks an otherwise retryable HTTP error as
    final (e.g. a server answering 500 to a request field it does not know).
    """
    return retrying(
        request,
        policy,
        error_cls,
        classify=classify,
        what=what,
        url=url,
        hint=lambda failure: hint(failure, url),
        final=(lambda failure: permanent(failure.message)) if permanent is not None else None,
    )


__all__ = ["call_openai", "classify", "hint", "server_message"]
