"""memoweave.providers.retry: backoff, Retry-After, give-up rules and the final error."""

from __future__ import annotations

from typing import Any

import pytest

from memoweave.errors import EmbeddingError, LLMError
from memoweave.providers.retry import (
    Failure,
    RetryPolicy,
    call_with_retries,
    retryable_status,
)

URL = "http://127.0.0.1:9/v1"


class ServerSaid(Exception):
    """What a fake SDK raises: an HTTP status, the server's message, maybe Retry-After."""

    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def classify(exc: BaseException) -> Failure | None:
    """The classifier a plugin would supply; ignores everything but ``ServerSaid``."""
    if isinstance(exc, ServerSaid):
        return Failure(
            "status",
            str(exc),
            retryable=retryable_status(exc.status),
            status=exc.status,
            retry_after=exc.retry_after,
            body={"error": str(exc)},
        )
    if isinstance(exc, TimeoutError):
        return Failure("timeout", str(exc), retryable=True)
    return None


class FlakyCall:
    """Raises the given exceptions in turn, then returns ``"ok"``; counts its calls."""

    def __init__(self, *failures: BaseException) -> None:
        self.failures = list(failures)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


def run(call: FlakyCall, policy: RetryPolicy, sleeps: list[float], **kwargs: Any) -> str:
    return call_with_retries(
        call,
        policy,
        LLMError,
        classify=classify,
        what="chat with model 'm'",
        url=URL,
        sleep=sleeps.append,
        **kwargs,
    )


def test_policy_delay_doubles_up_to_the_cap_and_honours_retry_after_within_it() -> None:
    policy = RetryPolicy(max_retries=5, backoff=0.5, max_delay=3.0)
    assert [policy.delay(n) for n in range(4)] == [0.5, 1.0, 2.0, 3.0]
    assert policy.delay(0, retry_after=2.5) == 2.5
    assert policy.delay(0, retry_after=0.0) == 0.0
    assert policy.delay(1, retry_after=60.0) == 1.0  # beyond the cap: backoff instead
    assert policy.delay(1, retry_after=-1.0) == 1.0


def test_policy_from_config_reads_the_connection_fields() -> None:
    class Settings:
        max_retries = 4
        retry_backoff = 0.25
        retry_max_delay = 2.0
        timeout = 30.0

    assert RetryPolicy.from_config(Settings()) == RetryPolicy(4, 0.25, 2.0, 30.0)


def test_retryable_statuses() -> None:
    assert [s for s in (400, 401, 404, 408, 409, 422, 429, 500, 503) if retryable_status(s)] == [
        408,
        409,
        429,
        500,
        503,
    ]


def test_retries_until_success_with_backoff() -> None:
    call = FlakyCall(ServerSaid(503, "busy"), ServerSaid(503, "busy"))
    sleeps: list[float] = []
    assert run(call, RetryPolicy(max_retries=2, backoff=0.1), sleeps) == "ok"
    assert call.calls == 3 and sleeps == [0.1, 0.2]


def test_retry_after_is_honoured_within_the_cap() -> None:
    call = FlakyCall(ServerSaid(429, "slow down", retry_after=1.5), ServerSaid(429, "again", 99))
    sleeps: list[float] = []
    assert run(call, RetryPolicy(max_retries=2, backoff=0.1, max_delay=2.0), sleeps) == "ok"
    assert sleeps == [1.5, 0.2]


def test_exhausted_retries_raise_the_error_class_with_message_and_details() -> None:
    call = FlakyCall(*(ServerSaid(503, f"busy #{n}") for n in range(1, 4)))
    sleeps: list[float] = []
    with pytest.raises(EmbeddingError) as info:
        call_with_retries(
            call,
            RetryPolicy(max_retries=2, backoff=0.0),
            EmbeddingError,
            classify=classify,
            what="embedding with model 'e'",
            url=URL,
            hint=lambda failure: f"status {failure.status} hint",
            details={"model": "e"},
            sleep=sleeps.append,
        )
    error = info.value
    assert call.calls == 3 and len(sleeps) == 2
    assert error.message == f"embedding with model 'e': HTTP 503 from {URL}: busy #3"
    assert error.hint == "status 503 hint"
    assert error.details == {
        "url": URL,
        "attempts": 3,
        "model": "e",
        "status": 503,
        "body": {"error": "busy #3"},
    }
    assert isinstance(error.__cause__, ServerSaid)


def test_non_retryable_failure_stops_at_once_with_the_default_hint() -> None:
    call = FlakyCall(ServerSaid(401, "bad key"), ServerSaid(503, "never reached"))
    sleeps: list[float] = []
    with pytest.raises(LLMError) as info:
        run(call, RetryPolicy(max_retries=5), sleeps)
    assert call.calls == 1 and sleeps == []
    assert "HTTP 401" in info.value.message and "bad key" in info.value.message
    assert info.value.hint == LLMError.default_hint
    assert info.value.details["attempts"] == 1


def test_final_marks_a_retryable_failure_permanent() -> None:
    call = FlakyCall(ServerSaid(500, "unknown field response_format"))
    sleeps: list[float] = []
    with pytest.raises(LLMError, match="response_format"):
        run(
            call, RetryPolicy(max_retries=3), sleeps, final=lambda f: "response_format" in f.message
        )
    assert call.calls == 1 and sleeps == []


def test_timeout_message_reports_the_policy_timeout_and_attempts() -> None:
    call = FlakyCall(TimeoutError("read timed out"), TimeoutError("read timed out"))
    sleeps: list[float] = []
    with pytest.raises(LLMError) as info:
        run(call, RetryPolicy(max_retries=1, backoff=0.0, timeout=0.3), sleeps)
    assert (
        info.value.message
        == f"chat with model 'm': no answer from {URL} within 0.3s (2 attempt(s))"
    )
    assert info.value.details == {"url": URL, "attempts": 2, "timeout": 0.3}


def test_unclassified_exceptions_propagate_unchanged_without_retry() -> None:
    call = FlakyCall(KeyError("bug"))
    sleeps: list[float] = []
    with pytest.raises(KeyError):
        run(call, RetryPolicy(max_retries=3), sleeps)
    assert call.calls == 1 and sleeps == []


def test_zero_retries_means_one_attempt() -> None:
    call = FlakyCall(ServerSaid(503, "busy"))
    sleeps: list[float] = []
    with pytest.raises(LLMError) as info:
        run(call, RetryPolicy(max_retries=0), sleeps)
    assert call.calls == 1 and info.value.details["attempts"] == 1
