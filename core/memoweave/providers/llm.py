"""The LLM contract.

An LLM turns a list of chat messages into one response. Implementations must:

- accept ``messages`` as OpenAI-style dicts (``{"role": ..., "content": ...}``), where
  ``content`` is a string or a list of parts (``{"type": "text", "text": ...}``,
  ``{"type": "image_url", "image_url": {"url": ...}}``; image parts only when
  ``capabilities.vision``);
- honour ``response_format`` (see *Structured output* below);
- report token usage on every response (``Usage`` with zeros only if the server reports none);
- raise :class:`memoweave.errors.LLMError` for every failure (unreachable server, HTTP
  error, timeout), carrying the server's message. Never return an empty response instead.

Structured output
-----------------
``response_format`` is one of:

- ``None``: free text;
- ``"json_object"``: the answer is one JSON object;
- a :class:`ResponseSchema` (``name``, ``schema``, ``strict``): the answer is one JSON
  object meant to be valid against ``schema``. Nothing else is accepted: a bare schema
  dict is ambiguous (is ``{"name": ..., "schema": ...}`` a wrapper or a schema?) and is a
  ``ValidationError``. :func:`check_response_format` does that check for providers.

What a provider does with a :class:`ResponseSchema`, by what its server supports:

- *native schema decoding* (OpenAI / Azure Structured Outputs
  ``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``; llama.cpp's
  ``{"type": "json_object", "schema": ...}`` grammar; Ollama ``format: <schema>``): send
  ``schema`` unchanged, ``name`` where the API takes a name, ``strict`` where it has the
  flag, and report ``capabilities.json_schema = True``;
- *JSON mode only*: request JSON mode and put the schema into the instructions;
  ``capabilities.json_schema = False``;
- *neither*: instructions plus extraction of the first JSON object of the answer.

In every mode the provider returns ``LLMResponse.text`` holding exactly one JSON object
(code fences and chatter removed) or raises ``LLMError`` with the raw answer in
``details["text"]``. It never mutates the schema and does not have to validate the answer
against it: the caller validates (and repairs) with its own model, because a weaker mode
cannot promise validity.

Schemas the core sends are written for constrained decoding (:mod:`memoweave.memory.schemas`):
objects list every property in ``required`` and set ``additionalProperties: false``, and
there are no length or count bounds (a ``maxLength: 2000`` becomes a 2,000-deep grammar
rule in llama.cpp); lengths are checked after parsing.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from memoweave.errors import ValidationError
from memoweave.runtime.aio import default_async, to_thread

Message = dict[str, Any]
_SCHEMA_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_FORMAT_HINT = (
    'Pass None, "json_object" or ResponseSchema(name, schema) '
    "(from memoweave.providers.llm) as response_format."
)


@dataclass(frozen=True, eq=True)
class ResponseSchema:
    """A named JSON schema the answer must follow (see *Structured output* above).

    name: ``[A-Za-z0-9_-]{1,64}`` (OpenAI's rule), sent where the API names schemas.
    schema: a JSON schema whose root is ``{"type": "object", ...}``.
    strict: the schema is written for strict decoding (every property required,
    ``additionalProperties: false``); providers send OpenAI's ``strict: true`` for it.
    """

    name: str
    schema: dict[str, Any] = field(hash=False)
    strict: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _SCHEMA_NAME.match(self.name):
            raise ValidationError(
                f"ResponseSchema.name must match [A-Za-z0-9_-]{{1,64}}, got {self.name!r}",
                hint="Name the schema like AdditiveAnswer or rerank_scores.",
            )
        if not isinstance(self.schema, dict) or self.schema.get("type") != "object":
            raise ValidationError(
                "ResponseSchema.schema must be a JSON schema dict with type 'object'",
                hint="Structured output is always one JSON object; wrap lists in a property.",
            )
        if not isinstance(self.strict, bool):
            raise ValidationError("ResponseSchema.strict must be a bool", hint="Pass True/False.")
        try:
            json.dumps(self.schema)
        except (TypeError, ValueError) as exc:
            raise ValidationError(
                f"ResponseSchema.schema is not JSON: {exc}", hint="Use only JSON values."
            ) from exc


ResponseFormat = Union[None, Literal["json_object"], ResponseSchema]


def check_response_format(response_format: object) -> ResponseFormat:
    """``response_format`` if it is one the contract allows, else ``ValidationError``."""
    if response_format is None or response_format == "json_object":
        return response_format
    if isinstance(response_format, ResponseSchema):
        return response_format
    kind = "a bare dict" if isinstance(response_format, dict) else repr(response_format)[:80]
    raise ValidationError(f"unsupported response_format: {kind}", hint=_FORMAT_HINT)


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

    json_schema: a :class:`ResponseSchema` is enforced by the server (constrained decoding).
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
        return await to_thread(
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
        await to_thread(self.close)
