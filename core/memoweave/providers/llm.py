"""The LLM contract.

An LLM turns a list of chat messages into one response. Implementations must:

- accept ``messages`` as OpenAI-style dicts (``{"role": ..., "content": ...}``), where
  ``content`` is a string or a list of parts (``{"type": "text", "text": ...}``,
  ``{"type": "image_url", "image_url": {"url": ...}}``; image parts only when
  ``capabilities.vision``);
- honour ``response_format``: ``None`` (free text), ``"json_object"`` (the text is one JSON
  object) or a JSON schema dict (the text is one JSON object valid against it). A provider
  whose server lacks native schema support falls back to JSON mode or to prompting and
  parsing, and says so through ``capabilities``;
- report token usage on every response (``Usage`` with zeros only if the server reports none);
- raise :class:`memoweave.errors.LLMError` for every failure (unreachable server, HTTP
  error, timeout), carrying the server's message. Never return an empty response instead.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from memoweave.runtime.aio import default_async

Message = dict[str, Any]
ResponseFormat = Union[None, Literal["json_object"], dict[str, Any]]


@dataclass(frozen=True)
class Usage:
    """Token counts of one call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model; ``arguments`` is already parsed JSON."""

    name: str
    arguments: dict[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class LLMResponse:
    """The model's answer: its text, any tool calls, and the usage of the call."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class LLMCapabilities:
    """What the provider supports natively.

    json_schema: ``response_format`` may be a JSON schema enforced by the server.
    json_object: the server has a JSON mode.
    vision: image parts in ``content`` are understood.
    tools: ``tools`` are passed to the model and ``tool_calls`` are returned.
    """

    json_schema: bool = False
    json_object: bool = True
    vision: bool = False
    tools: bool = False


class LLM(ABC):
    """A chat model. See the module docstring for the full contract."""

    capabilities: LLMCapabilities = LLMCapabilities()

    @abstractmethod
    def generate(
        self,
        messages: list[Message],
        *,
        response_format: ResponseFormat = None,
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        """Answer ``messages``; raise ``LLMError`` on any failure."""

    def close(self) -> None:  # noqa: B027 - optional hook, default does nothing
        """Release connections. Idempotent."""

    # -- optional async twins (same contract). The defaults run the sync method in a worker
    # thread; a provider with an async SDK overrides them with native async I/O, which
    # AsyncMemory then awaits (it runs the sync methods of the others in its own bounded
    # executor). See docs/plugins.md.

    @default_async
    async def agenerate(
        self,
        messages: list[Message],
        *,
        response_format: ResponseFormat = None,
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        """Async :meth:`generate`."""
        return await asyncio.to_thread(
            self.generate,
            messages,
            response_format=response_format,
            tools=tools,
            temperature=temperature,
            max_tokens=max_tokens,
        )

    @default_async
    async def aclose(self) -> None:
        """Async :meth:`close`."""
        await asyncio.to_thread(self.close)
