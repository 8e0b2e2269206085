"""Retries with exponential backoff for providers that call a server, and the final error.

:func:`call_with_retries` calls ``request()`` until it returns. A failure goes to the
plugin's ``classify(exc)``: ``None`` (not a provider failure, e.g. a bug) propagates
unchanged; a retryable :class:`Failure` is retried up to ``policy.max_retries`` times after
``policy.delay(attempt, failure.retry_after)`` seconds, unless ``final(failure)`` says it
is permanent. The last failure is raised as ``error_cls`` (chained to the exception): the
message names ``what`` failed and carries the server's message, ``hint(failure)`` picks
the hint (``None``: the class default), ``details`` holds ``url``, ``attempts``, the
caller's ``details``, ``timeout`` for timeouts and ``status`` + ``body`` for HTTP errors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from memoweave.errors import ProviderError
from memoweave.runtime.steps import Part, Steps, call, pause, run

T = TypeVar("T")
FailureKind = Literal["timeout", "connection", "status", "response", "other"]

#: HTTP statuses worth retrying besides 5xx: timeout, conflict, rate limit.
RETRYABLE_STATUS = frozenset({408, 409, 429})


def retryable_status(status: int) -> bool:
    """True for 408/409/429 and every 5xx."""
    return status in RETRYABLE_STATUS or status >= 500


class RetrySettings(Protocol):
    """The (read-only) config fields a :class:`RetryPolicy` is built from."""

    @property
    def max_retries(self) -> int: ...
    @property
    def retry_backoff(self) -> float: ...
    @property
    def retry_max_delay(self) -> float: ...
    @property
    def timeout(self) -> float: ...


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry; ``timeout`` (seconds) is only reported."""

    max_retries: int = 2
    backoff: float = 0.5
    max_delay: float = 8.0
    timeout: float = 60.0

    @classmethod
    def from_config(cls, config: RetrySettings) -> RetryPolicy:
        """The policy of a config with ``max_retries``/``retry_backoff``/... fields."""
        return cls(
            max_retries=config.max_retries,
            backoff=config.retry_backoff,
            max_delay=config.retry_max_delay,
            timeout=config.timeout,
        )

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds before retry number ``attempt`` (0-based): ``backoff * 2**attempt`` capped
        by ``max_delay``; a server's ``retry_after`` wins when it is within the cap."""
        if retry_after is not None and 0 <= retry_after <= self.max_delay:
            return retry_after
        return min(self.backoff * (2.0**attempt), self.max_delay)


@dataclass(frozen=True)
class Failure:
    """One failed attempt as the plugin reads it.

    kind: ``timeout``, ``connection`` (unreachable), ``status`` (an HTTP error answer),
        ``response`` (an answer that is not what the protocol promises) or ``other``.
    message: the server's own error text for ``status``; the cause otherwise
        (e.g. ``"ConnectError: connection refused"``).
    status: the HTTP status of a ``status`` failure (``None`` or <= 0 when unknown).
    retry_after: seconds the server asked to wait, if it said so.
    body: the parsed error body, reported in ``details["body"]``.
    """

    kind: FailureKind
    message: str
    retryable: bool
    status: int | None = None
    retry_after: float | None = None
    body: Any = None


def _describe(failure: Failure, what: str, url: str, attempts: int, timeout: float) -> str:
    if failure.kind == "timeout":
        return f"{what}: no answer from {url} within {timeout:g}s ({attempts} attempt(s))"
    if failure.kind == "connection":
        return f"{what}: cannot connect to {url}: {failure.message}"
    if failure.kind == "status":
        known = failure.status is not None and failure.status > 0
        where = f"HTTP {failure.status} from {url}" if known else f"error from {url}"
        return f"{what}: {where}: {failure.message}"
    if failure.kind == "response":
        return f"{what}: unexpected answer from {url}: {failure.message}"
    return f"{what}: {failure.message}"


def call_with_retries(
    request: Callable[[], T],
    policy: RetryPolicy,
    error_cls: type[ProviderError],
    *,
    classify: Callable[[BaseException], Failure | None],
    what: str,
    url: str,
    hint: Callable[[Failure], str | None] = lambda failure: None,
    final: Callable[[Failure], bool] | None = None,
    details: Mapping[str, Any] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run ``request`` with retries; raise ``error_cls`` on the last failure (module doc)."""
    result: T = run(
        retrying(
            lambda: call(request),
            policy,
            error_cls,
            classify=classify,
            what=what,
            url=url,
            hint=hint,
            final=final,
            details=details,
            back_off=lambda seconds: call(sleep, seconds),
        )
    )
    return result


def retrying(
    request: Callable[[], Part],
    policy: RetryPolicy,
    error_cls: type[ProviderError],
    *,
    classify: Callable[[BaseException], Failure | None],
    what: str,
    url: str,
    hint: Callable[[Failure], str | None] = lambda failure: None,
    final: Callable[[Failure], bool] | None = None,
    details: Mapping[str, Any] | None = None,
    back_off: Callable[[float], Part] = pause,
) -> Steps[Any]:
    """:func:`call_with_retries` as a pipeline (:mod:`memoweave.runtime.steps`):
    ``request()`` is the step of one attempt and ``back_off(seconds)`` the step of one
    back-off, so one plugin code path serves its sync methods (``run``) and its async
    twins (``drive``: awaited I/O, ``asyncio.sleep`` back-off)."""
    attempt = 0
    while True:
        try:
            return (yield request())
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            if (
                attempt < policy.max_retries
                and failure.retryable
                and not (final is not None and final(failure))
            ):
                yield back_off(policy.delay(attempt, failure.retry_after))
                attempt += 1
                continue
            attempts = attempt + 1
            info: dict[str, Any] = {"url": url, "attempts": attempts, **(details or {})}
            if failure.kind == "timeout":
                info["timeout"] = policy.timeout
            if failure.kind == "status":
                info |= {"status": failure.status, "body": failure.body}
            raise error_cls(
                _describe(failure, what, url, attempts, policy.timeout),
                hint=hint(failure),
                details=info,
            ) from exc


__all__ = [
    "RETRYABLE_STATUS",
    "Failure",
    "FailureKind",
    "RetryPolicy",
    "RetrySettings",
    "call_with_retries",
    "retryable_status",
    "retrying",
]
