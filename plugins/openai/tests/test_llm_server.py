"""The ``openai`` LLM against a real llama_cpp.server (SmolLM2-135M-Instruct).

Request details (response_format, max_tokens field, retries, headers) are observed with a
recording reverse proxy placed between the provider and the real server.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from memoweave.errors import LLMError, ValidationError
from memoweave.plugins import load_registry
from memoweave.providers.llm import ResponseSchema
from memoweave.testing import closed_port_url

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
PERSON_FORMAT = ResponseSchema("person", SCHEMA)
PERSON = [{"role": "user", "content": "Invent a person: give a name and an age."}]
JSON_HI = [{"role": "user", "content": 'Return the JSON object {"greeting": "hi"}.'}]

MakeLLM = Callable[..., Any]


def _chat_bodies(proxy: Any) -> list[dict[str, Any]]:
    return [r.body for r in proxy.requests if r.path.endswith("/chat/completions")]


def test_json_object_mode_puts_schema_in_prompt(
    openai_chat_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    """json_object mode: JSON mode on the wire, schema in the prompt, no schema claim."""
    proxy = openai_proxy(openai_chat_server.url)
    llm = load_registry().create(
        "llm",
        "openai",
        {
            "base_url": proxy.url + "/v1",
            "model": "smollm2-135m",
            "structured_output": "json_object",
        },
    )
    try:
        response = llm.generate(
            PERSON, response_format=PERSON_FORMAT, temperature=0.0, max_tokens=96
        )
    except LLMError as exc:  # a 135M model may echo the schema until max_tokens: it says so
        assert "did not return a JSON object" in exc.message and "text" in exc.details
    else:
        assert isinstance(json.loads(response.text), dict)
    finally:
        llm.close()
    assert (llm.capabilities.json_object, llm.capabilities.json_schema) == (True, False)
    [body] = _chat_bodies(proxy)
    assert body["response_format"] == {"type": "json_object"}
    assert json.dumps(SCHEMA) in body["messages"][0]["content"]


def test_auto_mode_steps_down_once_and_remembers(
    openai_chat_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    """llama-cpp-python rejects type=json_schema (HTTP 500 naming response_format, not
    retried): auto falls back to json_object + schema, which its grammar enforces."""
    proxy = openai_proxy(openai_chat_server.url)
    llm = load_registry().create(
        "llm", "openai", {"base_url": proxy.url + "/v1", "model": "smollm2-135m", "max_retries": 0}
    )
    try:
        first = llm.generate(PERSON, response_format=PERSON_FORMAT, temperature=0.0, max_tokens=32)
        assert llm.structured_output_mode == "json_object_schema"
        assert llm.capabilities.json_schema is True
        llm.generate(PERSON, response_format=PERSON_FORMAT, temperature=0.0, max_tokens=32)
    finally:
        llm.close()
    value = json.loads(first.text)
    assert isinstance(value["name"], str)
    assert isinstance(value["age"], int) and not isinstance(value["age"], bool)
    formats = [body["response_format"] for body in _chat_bodies(proxy)]
    assert formats[0] == {  # OpenAI Structured Outputs, as documented
        "type": "json_schema",
        "json_schema": {"name": "person", "schema": SCHEMA, "strict": True},
    }
    assert formats[1] == {"type": "json_object", "schema": SCHEMA}
    assert formats[2] == {"type": "json_object", "schema": SCHEMA}  # remembered: no retry
    assert len(formats) == 3


def test_prompt_mode_sends_no_response_format(
    openai_chat_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    proxy = openai_proxy(openai_chat_server.url)
    llm = load_registry().create(
        "llm",
        "openai",
        {"base_url": proxy.url + "/v1", "model": "smollm2-135m", "structured_output": "prompt"},
    )
    try:
        assert llm.capabilities.json_object is False
        try:
            response = llm.generate(
                JSON_HI, response_format="json_object", temperature=0.0, max_tokens=32
            )
        except LLMError as exc:  # a 135M model may not comply: then the error says so
            assert "did not return a JSON object" in exc.message
            assert "text" in exc.details
        else:
            assert isinstance(json.loads(response.text), dict)
    finally:
        llm.close()
    [body] = _chat_bodies(proxy)
    assert "response_format" not in body
    assert "JSON object" in body["messages"][0]["content"]  # the instruction was added


def test_usage_and_max_tokens_field(
    openai_chat_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    proxy = openai_proxy(openai_chat_server.url)
    llm = load_registry().create(
        "llm", "openai", {"base_url": proxy.url + "/v1", "model": "smollm2-135m"}
    )
    try:
        response = llm.generate(  # temperature 0 and ASCII words: no emoji split across tokens
            [{"role": "user", "content": "Count from one to twenty in words."}],
            max_tokens=6,
            temperature=0.0,
        )
    finally:
        llm.close()
    assert response.text.strip()
    assert response.usage.prompt_tokens > 0
    assert 0 < response.usage.completion_tokens <= 6
    assert response.usage.total_tokens == (
        response.usage.prompt_tokens + response.usage.completion_tokens
    )
    [body] = _chat_bodies(proxy)
    assert body["max_tokens"] == 6 and "max_completion_tokens" not in body


def test_forced_tool_call_is_parsed(openai_make_llm: MakeLLM) -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "save_fact",
            "description": "Save one fact about the user.",
            "parameters": {
                "type": "object",
                "properties": {"fact": {"type": "string"}},
                "required": ["fact"],
            },
        },
    }
    llm = openai_make_llm(tool_choice="force")
    response = llm.generate(
        [{"role": "user", "content": "I live in Paris."}],
        tools=[tool],
        temperature=0.0,
        max_tokens=32,
    )
    [call] = response.tool_calls
    assert call.name == "save_fact"
    assert isinstance(call.arguments["fact"], str)
    assert response.usage.completion_tokens > 0


def test_retries_on_500_then_succeeds(
    openai_chat_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    proxy = openai_proxy(openai_chat_server.url, fail_first=2, fail_status=500)
    llm = load_registry().create(
        "llm",
        "openai",
        {"base_url": proxy.url + "/v1", "model": "smollm2-135m", "max_retries": 2,
         "retry_backoff": 0.01},
    )  # fmt: skip
    try:
        response = llm.generate([{"role": "user", "content": "Say hi."}], max_tokens=4)
    finally:
        llm.close()
    assert response.text.strip()
    assert len(proxy.requests) == 3


def test_retries_exhausted_raise_llm_error_with_server_message(
    openai_chat_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    proxy = openai_proxy(
        openai_chat_server.url, fail_first=5, fail_status=429, fail_headers={"Retry-After": "0"}
    )
    llm = load_registry().create(
        "llm",
        "openai",
        {"base_url": proxy.url + "/v1", "model": "m", "max_retries": 1, "retry_backoff": 0.01},
    )
    try:
        with pytest.raises(LLMError) as info:
            llm.generate([{"role": "user", "content": "Say hi."}], max_tokens=4)
    finally:
        llm.close()
    assert "proxy-injected failure #2" in info.value.message
    assert info.value.details["status"] == 429 and info.value.details["attempts"] == 2
    assert "Rate limited" in info.value.hint
    assert len(proxy.requests) == 2


def test_client_errors_are_not_retried(
    openai_chat_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    proxy = openai_proxy(openai_chat_server.url, fail_first=1, fail_status=401)
    llm = load_registry().create(
        "llm", "openai", {"base_url": proxy.url + "/v1", "model": "m", "max_retries": 3}
    )
    try:
        with pytest.raises(LLMError) as info:
            llm.generate([{"role": "user", "content": "Say hi."}], max_tokens=4)
    finally:
        llm.close()
    assert info.value.details["status"] == 401 and "API key" in info.value.hint
    assert len(proxy.requests) == 1


def test_server_rejection_carries_server_message(openai_make_llm: MakeLLM) -> None:
    """A request the real server rejects (bad field value) maps to LLMError with its text."""
    llm = openai_make_llm(extra_body={"top_k": "not-a-number"})
    with pytest.raises(LLMError) as info:
        llm.generate([{"role": "user", "content": "Say hi."}], max_tokens=4)
    assert info.value.details["status"] >= 400  # llama-cpp-python: 500 for validation errors
    assert "top_k" in info.value.message and "valid integer" in info.value.message


def test_timeout_raises_llm_error(
    openai_chat_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    proxy = openai_proxy(openai_chat_server.url, delay=3.0)
    llm = load_registry().create(
        "llm",
        "openai",
        {"base_url": proxy.url + "/v1", "model": "m", "timeout": 0.3, "max_retries": 0},
    )
    started = time.monotonic()
    try:
        with pytest.raises(LLMError) as info:
            llm.generate([{"role": "user", "content": "Say hi."}], max_tokens=4)
    finally:
        llm.close()
    assert "within 0.3s" in info.value.message
    assert info.value.details["timeout"] == 0.3
    assert time.monotonic() - started < 2.5


def test_unreachable_server_is_retried_then_llm_error() -> None:
    url = closed_port_url() + "/v1"
    llm = load_registry().create(
        "llm",
        "openai",
        {"base_url": url, "model": "m", "max_retries": 2, "retry_backoff": 0.01},
    )
    with pytest.raises(LLMError) as info:
        llm.generate([{"role": "user", "content": "Say hi."}])
    assert url in info.value.message and info.value.details["attempts"] == 3
    llm.close()
    llm.close()
    with pytest.raises(LLMError, match="closed"):
        llm.generate([{"role": "user", "content": "Say hi."}])


def test_azure_variant_routes_to_deployment(
    openai_chat_server: Any, openai_proxy: Callable[..., Any]
) -> None:
    """AzureOpenAI: /openai/deployments/<name>/... with api-version and the api-key header."""
    proxy = openai_proxy(
        openai_chat_server.url,
        rewrite=lambda path: "/v1/chat/completions" if "/chat/completions" in path else path,
    )
    llm = load_registry().create(
        "llm",
        "openai",
        {
            "azure_endpoint": proxy.url,
            "azure_deployment": "smollm2-135m",
            "api_version": "2024-10-21",
            "api_key": "azure-test-key",
            "model": "smollm2-135m",
            "max_tokens_param": "max_tokens",
        },
    )
    try:
        response = llm.generate([{"role": "user", "content": "Say hi."}], max_tokens=4)
    finally:
        llm.close()
    assert response.text.strip()
    [request] = proxy.requests
    assert request.path.startswith("/openai/deployments/smollm2-135m/chat/completions")
    assert "api-version=2024-10-21" in request.path
    assert request.headers["api-key"] == "azure-test-key"
    assert llm.capabilities.vision is True  # Azure is an official endpoint


def test_api_key_from_environment_is_sent(
    openai_chat_server: Any, openai_proxy: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    proxy = openai_proxy(openai_chat_server.url)
    llm = load_registry().create(
        "llm", "openai", {"base_url": proxy.url + "/v1", "model": "smollm2-135m"}
    )
    try:
        llm.generate([{"role": "user", "content": "Say hi."}], max_tokens=2)
    finally:
        llm.close()
    assert proxy.requests[0].headers["authorization"] == "Bearer sk-from-env"


@pytest.mark.parametrize(
    ("messages", "kwargs", "fragment"),
    [
        ("hello", {}, "must be a list"),
        ([{"role": "wizard", "content": "hi"}], {}, "role"),
        ([{"role": "user", "content": 3}], {}, "content"),
        (
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
            {},
            "vision",
        ),
        (PERSON, {"temperature": 5}, "temperature"),
        (PERSON, {"max_tokens": 0}, "max_tokens"),
        (PERSON, {"response_format": "yaml"}, "response_format"),
        (PERSON, {"response_format": SCHEMA}, "bare dict"),
        (PERSON, {"tools": [{"nope": 1}]}, "tool"),
    ],
)
def test_invalid_input_is_rejected_before_any_request(
    openai_chat_server: Any,
    openai_proxy: Callable[..., Any],
    messages: Any,
    kwargs: dict[str, Any],
    fragment: str,
) -> None:
    proxy = openai_proxy(openai_chat_server.url)
    llm = load_registry().create("llm", "openai", {"base_url": proxy.url + "/v1", "model": "m"})
    try:
        with pytest.raises(ValidationError, match=fragment):
            llm.generate(messages, **kwargs)
    finally:
        llm.close()
    assert proxy.requests == []
