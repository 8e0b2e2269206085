"""Deterministic test doubles for memoweave's *own* core tests (never for plugin tests).

- :class:`ScriptedLLM` answers from a queue of scripted replies and records every call.
- :class:`HashingEmbedder` embeds by feature hashing: deterministic, instant, and texts
  that share words get a higher cosine similarity, which is enough to exercise retrieval.

They are not registered as providers: tests pass instances to the Memory directly. Plugin
tests must run the conformance kit against their real provider instead.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import inspect
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Union

from memoweave.errors import EmbeddingError, LLMError, ValidationError
from memoweave.providers.embedder import Embedder, Purpose
from memoweave.providers.llm import (
    LLM,
    LLMCapabilities,
    LLMResponse,
    Message,
    ResponseFormat,
    Usage,
    check_response_format,
)

#: One scripted answer: text, a JSON-able dict/list (sent as JSON text), a ready
#: ``LLMResponse``, an exception (instance or class) to raise, or a callable
#: ``(messages) -> answer`` computed at call time.
Answer = Union[
    str,
    dict[str, Any],
    list[Any],
    LLMResponse,
    BaseException,
    type[BaseException],
    Callable[[list[Message]], Any],
]

#: What :meth:`ScriptedLLM.malformed_next` returns: truncated, unparseable JSON.
MALFORMED_JSON = '{"facts": ["unterminated'


@dataclass(frozen=True)
class LLMCall:
    """One recorded :meth:`ScriptedLLM.generate` call (messages are a deep copy)."""

    messages: list[Message]
    kwargs: dict[str, Any] = field(default_factory=dict)


def _message_chars(messages: Sequence[Message]) -> int:
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):
            total += sum(len(p.get("text", "")) for p in content if isinstance(p, dict))
    return total


class ScriptedLLM(LLM):
    """An :class:`LLM` that replays scripted answers in order.

    When the queue is empty it returns ``default`` (as an answer) if one was given, else it
    raises ``LLMError``. Usage is reported as characters / 4 (prompt: the text of all
    messages; completion: the answer). ``latency_s`` sleeps before each answer
    (benchmarks). Thread-safe; ``agenerate`` is a native async twin (an async SDK).
    """

    def __init__(
        self,
        answers: Sequence[Answer] = (),
        *,
        default: Answer | None = None,
        capabilities: LLMCapabilities | None = None,
        latency_s: float = 0.0,
    ) -> None:
        if latency_s < 0:
            raise ValidationError(f"latency_s must be >= 0, got {latency_s!r}")
        self._queue: deque[Answer] = deque(answers)
        self.default = default
        self.capabilities = capabilities or LLMCapabilities(json_schema=True, json_object=True)
        self.latency_s = latency_s
        self.calls: list[LLMCall] = []
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        """How many scripted answers are still queued."""
        return len(self._queue)

    def push(self, *answers: Answer) -> None:
        """Queue ``answers`` after the ones already scripted."""
        with self._lock:
            self._queue.extend(answers)

    def fail_next(self, exc: BaseException | None = None) -> None:
        """Make the very next call raise ``exc`` (default: an ``LLMError``)."""
        with self._lock:
            self._queue.appendleft(exc or LLMError("scripted failure (ScriptedLLM.fail_next)"))

    def malformed_next(self) -> None:
        """Make the very next call return :data:`MALFORMED_JSON`."""
        with self._lock:
            self._queue.appendleft(MALFORMED_JSON)

    def generate(
        self,
        messages: list[Message],
        *,
        response_format: ResponseFormat = None,
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        """Record the call, then return (or raise) the next scripted answer.

        ``response_format`` is checked against the contract first (``ValidationError``)."""
        check_response_format(response_format)
        kwargs = {
            "response_format": response_format,
            "tools": tools,
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        answer = self._next(messages, kwargs)
        if self.latency_s:
            time.sleep(self.latency_s)
        return self._respond(answer, messages)

    async def agenerate(
        self,
        messages: list[Message],
        *,
        response_format: ResponseFormat = None,
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        """The native async twin (like an async SDK): the same queue and records;
        ``latency_s`` is awaited, never blocking the loop; a callable answer may return an
        awaitable, which is awaited."""
        kwargs = {
            "response_format": response_format,
            "tools": tools,
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        answer = self._next(messages, kwargs)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if callable(answer) and not isinstance(answer, (LLMResponse, type)):
            answer = answer(messages)
            if inspect.isawaitable(answer):
                answer = await answer
        return self._respond(answer, messages)

    def _next(self, messages: list[Message], kwargs: dict[str, Any]) -> Answer:
        """Record one call and pop its answer."""
        with self._lock:
            self.calls.append(LLMCall(copy.deepcopy(list(messages)), kwargs))
            number = len(self.calls)
            if self._queue:
                answer = self._queue.popleft()
            elif self.default is not None:
                answer = self.default
            else:
                raise LLMError(
                    f"ScriptedLLM has no scripted answer left for call #{number}",
                    hint="Script more answers (ScriptedLLM([...]) or .push()) or set default=.",
                )
        return answer

    def _respond(self, answer: Answer, messages: list[Message]) -> LLMResponse:
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, type) and issubclass(answer, BaseException):
            raise answer("scripted failure (ScriptedLLM)")
        if callable(answer) and not isinstance(answer, (LLMResponse, type)):
            answer = answer(messages)
        if isinstance(answer, LLMResponse):
            return answer
        text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
        usage = Usage(prompt_tokens=_message_chars(messages) // 4, completion_tokens=len(text) // 4)
        return LLMResponse(text=text, usage=usage)


_WORD_RE = re.compile(r"\w+")


@lru_cache(maxsize=65536)
def _bucket(feature: str, dims: int) -> tuple[int, float]:
    digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
    return digest % dims, (1.0 if (digest >> 63) & 1 else -1.0)


class HashingEmbedder(Embedder):
    """Bag-of-features embeddings by signed feature hashing (blake2b), L2-normalised.

    Features: lowercase word tokens (weight 1) and the character trigrams of each padded
    word (weight 0.5). The empty string maps to a fixed unit vector. ``purpose`` is
    ignored. ``calls`` counts ``embed`` calls, ``texts`` records every text embedded.
    """

    def __init__(self, dims: int = 64) -> None:
        if isinstance(dims, bool) or not isinstance(dims, int) or dims < 2:
            raise ValidationError(f"dims must be an int >= 2, got {dims!r}")
        self._dims = dims
        self.calls = 0
        self.texts: list[str] = []
        self._fail: BaseException | None = None
        self._lock = threading.Lock()

    @property
    def dims(self) -> int:
        """The configured vector length."""
        return self._dims

    def fail_next(self, exc: BaseException | None = None) -> None:
        """Make the next ``embed`` call raise ``exc`` (default: an ``EmbeddingError``)."""
        self._fail = exc or EmbeddingError("scripted failure (HashingEmbedder.fail_next)")

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        """One unit vector per text, in order; ``EmbeddingError`` on non-string input."""
        with self._lock:
            self.calls += 1
            failure, self._fail = self._fail, None
        if failure is not None:
            raise failure
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            raise EmbeddingError(f"texts must be a list of strings, got {type(texts).__name__}")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise EmbeddingError(f"texts[{i}] is {type(text).__name__}, not a string")
        with self._lock:
            self.texts.extend(texts)
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self._dims
        words = _WORD_RE.findall(text.lower())
        dims = self._dims
        for word in words:  # accumulated in place: memory stays flat for long texts
            index, sign = _bucket(f"w:{word}", dims)
            vec[index] += sign
        for word in words:
            padded = f"#{word}#"
            for i in range(len(padded) - 2):
                index, sign = _bucket(f"t:{padded[i : i + 3]}", dims)
                vec[index] += sign * 0.5
        if not words:
            index, sign = _bucket("\x00empty", dims)
            vec[index] += sign
        norm = math.sqrt(sum(x * x for x in vec))
        if norm == 0.0:  # all features cancelled out: fall back to the empty-text vector
            index, sign = _bucket("\x00empty", self._dims)
            vec[index], norm = sign, 1.0
        return [x / norm for x in vec]


__all__ = ["MALFORMED_JSON", "Answer", "HashingEmbedder", "LLMCall", "ScriptedLLM"]
