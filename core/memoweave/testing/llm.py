"""``LLMConformance``: the standard suite every LLM plugin runs.

Subclass it and override the ``llm`` fixture (any scope) yielding a provider built through
the registry. Remote providers also set ``remote = True`` and override
``provider_for_url(self, base_url)``. The suite makes about six short generate calls;
``max_tokens_json`` bounds the JSON ones (raise it for verbose models).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from memoweave.errors import LLMError, MemoweaveError
from memoweave.providers.llm import LLM, LLMResponse, Usage
from memoweave.testing.guard import StandardTests
from memoweave.testing.model_base import RemoteProviderSupport, check_http_500, check_unreachable

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city"],
}
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}  # fmt: skip


def schema_errors(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """A tiny JSON-schema checker (type, required, properties, items, enum)."""
    errors: list[str] = []
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        ok = any(
            isinstance(value, _JSON_TYPES[k])
            and not (k in ("integer", "number") and isinstance(value, bool))
            for k in kinds
        )
        if not ok:
            return [f"{path}: expected {kind}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in {schema['enum']}")
    if isinstance(value, dict):
        errors += [
            f"{path}: missing {key!r}" for key in schema.get("required", []) if key not in value
        ]
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                errors += schema_errors(value[key], sub, f"{path}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += schema_errors(item, schema["items"], f"{path}[{i}]")
    return errors


def _check_response(response: object) -> LLMResponse:
    assert isinstance(response, LLMResponse), f"generate returned {type(response).__name__}"
    assert isinstance(response.text, str)
    assert isinstance(response.usage, Usage)
    for name in ("prompt_tokens", "completion_tokens"):
        count = getattr(response.usage, name)
        assert isinstance(count, int) and count >= 0, f"usage.{name} = {count!r}"
    return response


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"response is not valid JSON ({exc}): {text!r}") from exc
    assert isinstance(value, dict), f"response is JSON but not an object: {text!r}"
    return value


def _say_hi(llm: LLM) -> object:
    return llm.generate([{"role": "user", "content": "Say hi."}], max_tokens=4)


class LLMConformance(RemoteProviderSupport, StandardTests):
    """Every standard LLM test; override the ``llm`` fixture."""

    _kit_suite = True
    max_tokens_json: int = 96

    @pytest.fixture
    def llm(self) -> LLM:
        """Override me: yield an LLM built through the registry."""
        pytest.fail("Override the `llm` fixture in your LLMConformance subclass.")

    def test_generate_text(self, llm: LLM) -> None:
        """Plain generation returns non-empty text and a Usage.

        Troubleshooting: map the server's answer to ``LLMResponse(text, usage=Usage(...))``
        with ints (``0`` when the server reports no usage); strip nothing but the chat
        template's special tokens; never return ``None`` as text.
        """
        response = _check_response(
            llm.generate(
                [
                    {"role": "system", "content": "You are a helpful assistant."},
                    {"role": "user", "content": "Name one colour."},
                ],
                max_tokens=12,
            )
        )
        assert response.text.strip(), "empty text for a plain prompt"

    def test_content_parts_are_accepted(self, llm: LLM) -> None:
        """``content`` given as a list of text parts works like a string.

        Troubleshooting: OpenAI-style ``[{"type": "text", "text": ...}]`` content must be
        accepted; servers without part support need the text parts joined into a string.
        """
        response = _check_response(
            llm.generate(
                [{"role": "user", "content": [{"type": "text", "text": "Name one fruit."}]}],
                max_tokens=12,
            )
        )
        assert response.text.strip()

    def test_json_object_mode(self, llm: LLM) -> None:
        """``response_format="json_object"`` returns text that parses as one JSON object.

        Troubleshooting: enable the server's JSON mode (``response_format`` for OpenAI-style
        servers, ``format="json"`` for Ollama, a JSON grammar for llama.cpp); strip code
        fences; if the output is truncated by ``max_tokens``, raise ``LLMError``.
        """
        response = _check_response(
            llm.generate(
                [
                    {"role": "system", "content": "Reply with a JSON object only."},
                    {"role": "user", "content": 'Return {"answer": "yes"} as JSON.'},
                ],
                response_format="json_object",
                temperature=0.0,
                max_tokens=self.max_tokens_json,
            )
        )
        _json_object(response.text)

    def test_json_schema_mode(self, llm: LLM) -> None:
        """A schema ``response_format`` returns a JSON object (valid against it if claimed).

        Troubleshooting: with ``capabilities.json_schema`` the server must enforce the
        schema (OpenAI ``json_schema``, Ollama ``format=<schema>``, llama.cpp grammar from
        schema); without it, fall back to JSON mode plus the schema in the prompt, and do
        not claim ``json_schema``.
        """
        response = _check_response(
            llm.generate(
                [
                    {"role": "system", "content": "Reply with JSON only."},
                    {"role": "user", "content": "Give a city and its population."},
                ],
                response_format=SCHEMA,
                temperature=0.0,
                max_tokens=self.max_tokens_json,
            )
        )
        value = _json_object(response.text)
        if llm.capabilities.json_schema:
            assert not schema_errors(value, SCHEMA), schema_errors(value, SCHEMA)

    def test_temperature_and_max_tokens_are_honoured(self, llm: LLM) -> None:
        """temperature=0 and a small max_tokens are accepted; completion stays within it.

        Troubleshooting: pass ``max_tokens`` through (``num_predict`` for Ollama,
        ``max_tokens``/``max_completion_tokens`` for OpenAI-style servers) and report
        ``usage.completion_tokens`` from the server.
        """
        response = _check_response(
            llm.generate(
                [{"role": "user", "content": "Count from one to twenty in words."}],
                temperature=0.0,
                max_tokens=5,
            )
        )
        assert response.usage.completion_tokens <= 5

    def test_empty_messages_are_rejected(self, llm: LLM) -> None:
        """``generate([])`` raises a MemoweaveError (ValidationError or LLMError).

        Troubleshooting: validate ``messages`` before calling the server and raise
        ``memoweave.errors.ValidationError``; never send an empty conversation.
        """
        with pytest.raises(MemoweaveError):
            llm.generate([])

    def test_unreachable_server_raises_llm_error(self) -> None:
        """A connection refused (closed 127.0.0.1 port) raises LLMError (remote providers).

        Troubleshooting: catch the client's connection/timeout exceptions (``httpx``,
        ``openai.APIConnectionError``, ``ollama`` errors) and re-raise ``LLMError`` with the
        URL in the message; keep client retries low so this test is quick.
        """
        check_unreachable(self, _say_hi, LLMError)

    def test_http_500_raises_llm_error_with_message(self) -> None:
        """A server answering 500 raises LLMError whose text contains the server's message.

        Troubleshooting: catch the client's HTTP status errors and put the response body's
        message (``error.message`` or ``error``) into the ``LLMError`` message or details.
        """
        check_http_500(self, _say_hi, LLMError)


__all__ = ["SCHEMA", "LLMConformance", "schema_errors"]
