"""How ``ollama`` client errors are retried and reported (the loop is
:mod:`memoweave.providers.retry`).

:func:`call_ollama` runs one request, retrying on connection errors, timeouts and HTTP
408/409/429/5xx (``retry_backoff * 2**n`` seconds, capped by ``retry_max_delay``). Every
other failure, and the last one, is raised as the given :class:`ProviderError` subclass
whose message carries the server's own error text (Ollama answers ``{"error": "..."}``);
``details`` holds ``status``, ``body``, ``url``, ``attempts`` and ``model``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from memoweave.errors import ProviderError
from memoweave.providers.retry import Failure, RetryPolicy, retryable_status, retrying
from memoweave.runtime.steps import Part, Steps

T = TypeVar("T")


def server_message(error: object) -> str:
    """The human-readable text of ``ResponseError.error`` (a string, or a parsed body)."""
    if isinstance(error, dict):
        inner = error.get("error", error.get("message"))
        if isinstance(inner, dict):
            inner = inner.get("message", inner)
        return str(inner if inner is not None else json.dumps(error))
    return str(error).strip() or "(empty response)"


def classify(exc: BaseException) -> Failure | None:
    """The :class:`Failure` of an ``ollama``/``httpx`` exception; None for anything else."""
    import httpx
    import ollama
    import pydantic

    cause = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ollama.ResponseError):
        status = int(getattr(exc, "status_code", -1))
        error = getattr(exc, "error", str(exc))
        return Failure(
            "status",
            server_message(error),
            retryable=retryable_status(status),
            status=status,
            body=error,
        )
    if isinstance(exc, httpx.TimeoutException):
        return Failure("timeout", cause, retryable=True)
    if isinstance(exc, (ConnectionError, httpx.TransportError)):
        return Failure("connection", cause, retryable=True)
    if isinstance(exc, (pydantic.ValidationError, ValueError, httpx.HTTPError)):
        return Failure("response", cause, retryable=False)
    return None


def hint(failure: Failure, url: str, model: str) -> str | None:
    """The hint of ``failure`` for ``model`` at ``url`` (None: the error class default)."""
    status = failure.status if failure.status is not None else -1
    if failure.kind == "timeout":
        return (
            "Raise config.timeout (the first call loads the model), lower max_tokens or "
            "use a smaller model."
        )
    if failure.kind == "connection":
        return (
            f"Is `ollama serve` running and reachable at {url}? Check config.host or $OLLAMA_HOST."
        )
    if failure.kind == "response":
        return "Is this an Ollama server? Check config.host (no /api or /v1 suffix)."
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


def call_ollama(
    request: Callable[[], Part],
    policy: RetryPolicy,
    error_cls: type[ProviderError],
    *,
    what: str,
    url: str,
    model: str,
) -> Steps[Any]:
    """The pipeline running the step ``request()`` with retries; raises ``error_cls`` on
    the final failure."""
    return retrying(
        request,
        policy,
        error_cls,
        classify=classify,
        what=what,
        url=url,
        hint=lambda failure: hint(failure, url, model),
        details={"model": model},
    )


__all__ = ["call_ollama", "classify", "hint", "server_message"]
