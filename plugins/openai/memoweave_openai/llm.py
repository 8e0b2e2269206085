"""``OpenAILLM``: the :class:`memoweave.providers.llm.LLM` over OpenAI's chat completions.

Works with OpenAI, Azure OpenAI and any OpenAI-compatible server; ``agenerate`` is the
native async twin of ``generate`` (the same pipeline, awaited on ``AsyncOpenAI``).
Structured output follows ``config.structured_output`` (see
:mod:`memoweave_openai.structured`); ``capabilities`` reflects the mode in use (``auto`` may
step down once and then stays there). Every failure is an :class:`LLMError` carrying the
server's message; usage is reported on every answer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from memoweave.errors import LLMError, ValidationError
from memoweave.providers.chat import function_tools
from memoweave.providers.llm import (
    LLM,
    LLMCapabilities,
    LLMResponse,
    Message,
    ResponseFormat,
    Usage,
)
from memoweave.providers.retry import RetryPolicy
from memoweave.runtime.aio import awaitable
from memoweave.runtime.steps import Steps, blocking, call
from memoweave_openai.client import OpenAITransport
from memoweave_openai.config import OpenAILLMConfig
from memoweave_openai.messages import normalize_messages, parse_tool_calls
from memoweave_openai.retry import call_openai
from memoweave_openai.structured import (
    NATIVE_SCHEMA_MODES,
    JsonRequest,
    extract_json_object,
    initial_mode,
    instruction,
    json_request,
    next_mode,
    response_format_param,
    with_instruction,
)

_STEP_DOWN_STATUS = frozenset({400, 422})
_FIELD = "response_format"


def _rejects_format(error: LLMError) -> bool:
    """The server refused the response_format (llama-cpp-python answers 500 to it)."""
    return error.details.get("status") in _STEP_DOWN_STATUS or _FIELD in error.message


def _usage_dict(usage: Usage) -> dict[str, int]:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}


class OpenAILLM(LLM):
    """Chat completions against ``config``'s endpoint (see the module docstring)."""

    def __init__(self, config: OpenAILLMConfig, transport: OpenAITransport) -> None:
        self.config = config
        self.endpoint = endpoint = transport.endpoint
        self._transport = transport
        self._mode = initial_mode(config.structured_output)
        self._auto = config.structured_output == "auto"
        self._vision = endpoint.official if config.vision is None else config.vision
        self._limit_param = config.max_tokens_param or (
            "max_completion_tokens" if endpoint.official else "max_tokens"
        )
        self._policy = RetryPolicy.from_config(config)
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def from_config(cls, config: OpenAILLMConfig) -> OpenAILLM:
        """Build the client (resolving the API key now) and the provider."""
        return cls(config, OpenAITransport(config))

    @property
    def capabilities(self) -> LLMCapabilities:  # type: ignore[override]  # a property over the base class attribute
        """What the current structured-output mode and the config support."""
        return LLMCapabilities(
            json_schema=self._mode in NATIVE_SCHEMA_MODES,
            json_object=self._mode != "prompt",
            vision=self._vision,
            tools=self.config.tools,
        )

    @property
    def structured_output_mode(self) -> str:
        """The structured-output mode in use (``auto`` resolved)."""
        return self._mode

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
            raise LLMError("this OpenAI LLM provider is closed", hint="Create a new provider.")
        chat = normalize_messages(messages, vision=self._vision)
        request = json_request(response_format)
        params = self._base_params(function_tools(tools), temperature, max_tokens)
        if request is None:
            return (yield from self._complete(chat, params))
        return (yield from self._generate_json(chat, params, request))

    def _close(self) -> Steps[None]:
        """Close the HTTP clients. Idempotent."""
        if not self._closed:
            self._closed = True
            yield call(self._transport.close)

    generate = blocking(_generate)
    agenerate = awaitable(_generate)
    close = blocking(_close)
    aclose = awaitable(_close)

    # -- internals ----------------------------------------------------------------------

    def _base_params(
        self,
        tools: list[dict[str, Any]] | None,
        temperature: float | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        if temperature is not None and (
            isinstance(temperature, bool)
            or not isinstance(temperature, (int, float))
            or not 0 <= temperature <= 2
        ):
            raise ValidationError(
                f"temperature must be a number in [0, 2], got {temperature!r}",
                hint="Pass a temperature between 0 and 2, or None for the default.",
            )
        if max_tokens is not None and (
            isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
        ):
            raise ValidationError(
                f"max_tokens must be a positive int, got {max_tokens!r}",
                hint="Pass a positive integer, or None for the default.",
            )
        if tools and not self.config.tools:
            raise ValidationError(
                "tools were passed but this provider is configured with tools: false",
                hint="Set tools: true in the LLM config if the server supports tool calls.",
            )
        params: dict[str, Any] = {"model": self.config.model}
        temperature = self.config.temperature if temperature is None else temperature
        if temperature is not None:
            params["temperature"] = float(temperature)
        limit = self.config.max_tokens if max_tokens is None else max_tokens
        if limit is not None:
            params[self._limit_param] = limit
        if tools:
            params["tools"] = tools
            choice = self.config.tool_choice
            if choice == "force":
                params["tool_choice"] = {
                    "type": "function",
                    "function": {"name": tools[0]["function"]["name"]},
                }
            elif choice is not None:
                params["tool_choice"] = choice
        if self.config.extra_body:
            params["extra_body"] = dict(self.config.extra_body)
        return params

    def _generate_json(
        self, chat: list[Message], params: dict[str, Any], request: JsonRequest
    ) -> Steps[LLMResponse]:
        mode: str | None = self._mode
        first_error: LLMError | None = None
        tried: list[dict[str, Any] | None] = []
        while mode is not None:
            fmt = response_format_param(request, mode, strict=self.config.strict_schema)
            if fmt in tried:  # same request as a mode that already failed
                mode = next_mode(mode)
                continue
            tried.append(fmt)
            call = dict(params)
            if fmt is not None:
                call["response_format"] = fmt
            probing = self._auto and fmt is not None and next_mode(mode) is not None
            try:
                response = yield from self._complete(
                    with_instruction(chat, instruction(request, mode)),
                    call,
                    permanent=(lambda message: _FIELD in message) if probing else None,
                )
            except LLMError as exc:
                if not (probing and "status" in exc.details and _rejects_format(exc)):
                    if first_error is None:
                        raise
                    raise first_error from exc
                first_error = first_error or exc
                mode = next_mode(mode)
                continue
            if self._auto and mode != self._mode:
                with self._lock:
                    self._mode = mode
            return self._as_json(response, mode)
        assert first_error is not None  # the loop only ends after a step-down failure
        raise first_error

    def _as_json(self, response: LLMResponse, mode: str) -> LLMResponse:
        if response.tool_calls and not response.text.strip():
            return response
        extracted = extract_json_object(response.text)
        if extracted is None:
            raise LLMError(
                f"the model did not return a JSON object (structured_output mode {mode!r})",
                hint="Raise max_tokens, use a stronger model, or a stronger structured_output "
                "mode (json_schema / json_object_schema).",
                details={"text": response.text, "mode": mode, "usage": _usage_dict(response.usage)},
            )
        return LLMResponse(text=extracted, tool_calls=response.tool_calls, usage=response.usage)

    def _complete(
        self,
        chat: list[Message],
        params: dict[str, Any],
        permanent: Callable[[str], bool] | None = None,
    ) -> Steps[LLMResponse]:
        completion = yield from call_openai(
            lambda: call(self._transport.chat, messages=chat, **params),
            self._policy,
            LLMError,
            what=f"chat completion with model {self.config.model!r}",
            url=self.endpoint.url,
            permanent=permanent,
        )
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise LLMError(
                f"the server at {self.endpoint.url} returned no choices",
                details={"response": repr(completion)[:2000]},
            )
        choice = choices[0]
        message = choice.message
        refusal = getattr(message, "refusal", None)
        if refusal:
            raise LLMError(f"the model refused: {refusal}", details={"refusal": refusal})
        text = message.content or ""
        tool_calls = parse_tool_calls(message)
        raw_usage = getattr(completion, "usage", None)
        usage = Usage(
            prompt_tokens=int(getattr(raw_usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(raw_usage, "completion_tokens", 0) or 0),
        )
        if not text.strip() and not tool_calls:
            raise LLMError(
                f"the model returned an empty answer (finish_reason={choice.finish_reason!r})",
                hint="Raise max_tokens (reasoning models spend tokens before answering).",
                details={"finish_reason": choice.finish_reason, "usage": _usage_dict(usage)},
            )
        return LLMResponse(text=text, tool_calls=tool_calls, usage=usage)


__all__ = ["OpenAILLM"]
