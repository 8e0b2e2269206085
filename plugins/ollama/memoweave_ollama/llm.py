"""``OllamaLLM``: the :class:`memoweave.providers.llm.LLM` over Ollama's ``/api/chat``.

- ``response_format`` (the core's contract, :mod:`memoweave.providers.llm`):
  ``"json_object"`` is sent as ``format: "json"``; a ``ResponseSchema`` as
  ``format: <its schema>`` unchanged (Ollama >= 0.5 turns it into a grammar; the API has
  no name or strict flag), so ``capabilities.json_schema`` is true. Anything else is a
  ``ValidationError`` before any request. The answer is checked to be one JSON object.
- ``max_tokens`` → ``options.num_predict``; ``temperature`` → ``options.temperature``;
  config ``num_ctx`` and ``options`` are sent with every call; ``keep_alive`` and ``think``
  when set. Requests are never streamed.
- usage comes from ``prompt_eval_count`` / ``eval_count`` (0 when the server omits them,
  e.g. for a fully cached prompt).
- every failure is an :class:`LLMError` carrying the server's ``error`` text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memoweave.errors import LLMError, ValidationError
from memoweave.providers.llm import (
    LLM,
    LLMCapabilities,
    LLMResponse,
    Message,
    ResponseFormat,
    Usage,
    check_response_format,
)
from memoweave.providers.retry import RetryPolicy
from memoweave.runtime.aio import awaitable
from memoweave.runtime.steps import Steps, blocking, call
from memoweave_ollama.client import OllamaTransport
from memoweave_ollama.config import OllamaLLMConfig
from memoweave_ollama.messages import parse_tool_calls, to_ollama_messages, to_ollama_tools
from memoweave_ollama.retry import call_ollama

OllamaFormat = str | dict[str, Any] | None
_FENCE_RE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```\s*$", re.DOTALL)


def to_ollama_format(response_format: object) -> OllamaFormat:
    """``None`` → None, ``"json_object"`` → ``"json"``, a ``ResponseSchema`` → its schema."""
    checked = check_response_format(response_format)
    if checked is None:
        return None
    if checked == "json_object":
        return "json"
    return checked.schema


def extract_json_object(text: str) -> str | None:
    """``text`` (code fences removed) if it is exactly one JSON object, else None."""
    stripped = text.strip()
    fenced = _FENCE_RE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        return None
    return stripped if isinstance(value, dict) else None


def _check_number(name: str, value: object, low: float, high: float | None, integer: bool) -> None:
    kinds = (int,) if integer else (int, float)
    if (
        isinstance(value, bool)
        or not isinstance(value, kinds)
        or value < low
        or (high is not None and value > high)
    ):
        expected = "a positive int" if integer else f"a number in [{low:g}, {high:g}]"
        raise ValidationError(
            f"{name} must be {expected}, got {value!r}",
            hint=f"Pass {expected}, or None for the default.",
        )


class OllamaLLM(LLM):
    """Chat with an Ollama model (see the module docstring)."""

    def __init__(self, config: OllamaLLMConfig, transport: OllamaTransport) -> None:
        self.config = config
        self.url = transport.url
        self._transport = transport
        self._policy = RetryPolicy.from_config(config)
        self._closed = False

    @classmethod
    def from_config(cls, config: OllamaLLMConfig) -> OllamaLLM:
        """Resolve the host (config, ``$OLLAMA_HOST``, default) and build the client."""
        return cls(config, OllamaTransport(config))

    @property
    def capabilities(self) -> LLMCapabilities:  # type: ignore[override]  # a property over the base class attribute
        """JSON schema and JSON mode always; tools and vision as configured."""
        return LLMCapabilities(
            json_schema=True, json_object=True, vision=self.config.vision, tools=self.config.tools
        )

    def _generate(
        self,
        messages: list[Message],
        *,
        response_format: ResponseFormat = None,
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Steps[LLMResponse]:
        """Answer ``messages``; raise ``LLMError`` on any failure (see module docstring)."""
        if self._closed:
            raise LLMError("this Ollama LLM provider is closed", hint="Create a new provider.")
        request = self.build_request(
            messages,
            response_format=response_format,
            tools=tools,
            temperature=temperature,
            max_tokens=max_tokens,
        )
        response = yield from call_ollama(
            lambda: call(self._transport.chat, **request),
            self._policy,
            LLMError,
            what=f"chat with model {self.config.model!r}",
            url=self.url,
            model=self.config.model,
        )
        return self._to_response(response, request.get("format"))

    def build_request(
        self,
        messages: list[Message],
        *,
        response_format: ResponseFormat = None,
        tools: list[dict[str, Any]] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """The validated keyword arguments of ``ollama.Client.chat`` (no I/O)."""
        chat = to_ollama_messages(messages, vision=self.config.vision)
        fmt = to_ollama_format(response_format)
        ollama_tools = to_ollama_tools(tools)
        if ollama_tools and not self.config.tools:
            raise ValidationError(
                "tools were passed but this provider is configured with tools: false",
                hint="Set tools: true in the LLM config for a model that supports tool calls.",
            )
        if temperature is not None:
            _check_number("temperature", temperature, 0, 2, integer=False)
        if max_tokens is not None:
            _check_number("max_tokens", max_tokens, 1, None, integer=True)
        options: dict[str, Any] = dict(self.config.options)
        if self.config.num_ctx is not None:
            options["num_ctx"] = self.config.num_ctx
        temperature = self.config.temperature if temperature is None else temperature
        if temperature is not None:
            options["temperature"] = float(temperature)
        limit = self.config.max_tokens if max_tokens is None else max_tokens
        if limit is not None:
            options["num_predict"] = limit
        request: dict[str, Any] = {"model": self.config.model, "messages": chat, "stream": False}
        optional = {
            "format": fmt,
            "tools": ollama_tools,
            "options": options or None,
            "keep_alive": self.config.keep_alive,
            "think": self.config.think,
        }
        request.update({k: v for k, v in optional.items() if v is not None})
        return request

    def _close(self) -> Steps[None]:
        """Close the HTTP clients. Idempotent."""
        if not self._closed:
            self._closed = True
            yield call(self._transport.close)

    generate = blocking(_generate)
    agenerate = awaitable(_generate)
    close = blocking(_close)
    aclose = awaitable(_close)

    def _to_response(self, response: Any, fmt: OllamaFormat) -> LLMResponse:
        message = response.message
        text = message.content or ""
        tool_calls = parse_tool_calls(message)
        usage = Usage(
            prompt_tokens=int(response.prompt_eval_count or 0),
            completion_tokens=int(response.eval_count or 0),
        )
        details = {
            "done_reason": response.done_reason,
            "usage": {
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
            },
            "model": self.config.model,
        }
        if not text.strip() and not tool_calls:
            raise LLMError(
                f"the model returned an empty answer (done_reason={response.done_reason!r})",
                hint="Raise max_tokens; thinking models may spend the budget on thinking "
                "(set think: false).",
                details=details,
            )
        if fmt is not None and not tool_calls:
            extracted = extract_json_object(text)
            if extracted is None:
                truncated = response.done_reason == "length"
                raise LLMError(
                    "the model did not return a JSON object"
                    + (" (cut off by max_tokens)" if truncated else ""),
                    hint="Raise max_tokens." if truncated else "Use a stronger model.",
                    details=details | {"text": text},
                )
            text = extracted
        return LLMResponse(text=text, tool_calls=tool_calls, usage=usage)


__all__ = ["OllamaLLM", "extract_json_object", "to_ollama_format"]
