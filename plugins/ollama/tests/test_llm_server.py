"""The ``ollama`` LLM against the protocol server: JSON schema, tools, errors, retries, host."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest

from memoweave.errors import LLMError, ValidationError
from memoweave.providers.llm import ResponseSchema
from memoweave.testing import closed_port_url
from memoweave.testing.llm import schema_errors

CHAT_MODEL = "smollm2:135m"
Serve = Callable[..., Any]
Create = Callable[..., Any]

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}
HI = [{"role": "user", "content": "Say hi."}]


def test_json_schema_output_validates_and_reports_usage(
    ollama_serve: Serve, ollama_create: Create
) -> None:
    server = ollama_serve()
    llm = ollama_create(
        "llm", host=server.url, model=CHAT_MODEL, keep_alive="5m", num_ctx=1024,
        options={"seed": 7},
    )  # fmt: skip
    response = llm.generate(
        [{"role": "user", "content": "Describe a person as JSON with a name and an age."}],
        response_format=ResponseSchema("person", PERSON),
        temperature=0.0,
        max_tokens=48,
    )
    value = json.loads(response.text)
    assert schema_errors(value, PERSON) == []
    assert response.usage.prompt_tokens > 0 and 0 < response.usage.completion_tokens <= 48
    [sent] = server.calls("/api/chat")
    assert sent["format"] == PERSON and sent["stream"] is False and sent["keep_alive"] == "5m"
    assert sent["options"] == {"seed": 7, "num_ctx": 1024, "temperature": 0.0, "num_predict": 48}


def test_tool_call_is_returned_with_parsed_arguments(
    ollama_serve: Serve, ollama_create: Create
) -> None:
    server = ollama_serve()
    llm = ollama_create("llm", host=server.url, model=CHAT_MODEL)
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather of a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
    response = llm.generate(
        [{"role": "user", "content": "What is the weather in Paris?"}],
        tools=[tool],
        temperature=0.0,
        max_tokens=64,
    )
    [call] = response.tool_calls
    assert call.name == "get_weather" and isinstance(call.arguments.get("city"), str)
    assert response.usage.completion_tokens > 0
    assert server.calls("/api/chat")[0]["tools"][0]["function"]["name"] == "get_weather"


def test_retries_on_503_then_succeeds(ollama_serve: Serve, ollama_create: Create) -> None:
    server = ollama_serve()
    server.inject(503, "server busy, please retry", times=2)
    llm = ollama_create("llm", host=server.url, model=CHAT_MODEL, max_retries=2)
    response = llm.generate(HI, max_tokens=3, temperature=0.0)
    assert response.text.strip() and response.usage.completion_tokens <= 3
    assert len(server.calls("/api/chat")) == 3


def test_503_after_the_last_retry_carries_the_server_message(
    ollama_serve: Serve, ollama_create: Create
) -> None:
    server = ollama_serve(chat=False)
    server.inject(503, "server busy, please retry", times=3)
    llm = ollama_create("llm", host=server.url, model=CHAT_MODEL, max_retries=1)
    with pytest.raises(LLMError) as info:
        llm.generate(HI)
    assert "server busy, please retry" in str(info.value) and "HTTP 503" in str(info.value)
    assert info.value.details["status"] == 503 and info.value.details["attempts"] == 2
    assert len(server.calls("/api/chat")) == 2


def test_unknown_model_is_an_llm_error_with_the_server_message(
    ollama_serve: Serve, ollama_create: Create
) -> None:
    server = ollama_serve(chat=False)
    llm = ollama_create("llm", host=server.url, model="no-such-model", max_retries=3)
    with pytest.raises(LLMError) as info:
        llm.generate(HI)
    assert 'model "no-such-model" not found, try pulling it first' in info.value.message
    assert info.value.details["status"] == 404 and "ollama pull no-such-model" in info.value.hint
    assert len(server.calls("/api/chat")) == 1  # 404 is not retried


def test_embedding_model_used_for_chat_is_rejected(
    ollama_serve: Serve, ollama_create: Create
) -> None:
    server = ollama_serve(chat=False, embed=True)
    llm = ollama_create("llm", host=server.url, model="all-minilm")
    with pytest.raises(LLMError, match="does not support chat"):
        llm.generate(HI)


def test_timeout_is_an_llm_error(ollama_serve: Serve, ollama_create: Create) -> None:
    server = ollama_serve(chat=False)
    server.inject(503, "too late", times=2, delay=2.0)
    llm = ollama_create("llm", host=server.url, model=CHAT_MODEL, timeout=0.3, max_retries=1)
    with pytest.raises(LLMError) as info:
        llm.generate(HI)
    assert "within 0.3s" in info.value.message and info.value.details["attempts"] == 2


def test_wrong_path_prefix_shows_the_plain_text_404(
    ollama_serve: Serve, ollama_create: Create
) -> None:
    server = ollama_serve(chat=False)
    llm = ollama_create("llm", host=server.url + "/v1", model=CHAT_MODEL)
    with pytest.raises(LLMError, match="404 page not found"):
        llm.generate(HI)


def test_ollama_host_env_is_used_when_config_has_no_host(
    ollama_serve: Serve, ollama_create: Create, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = ollama_serve(chat=False)
    monkeypatch.setenv("OLLAMA_HOST", server.url.removeprefix("http://"))  # host:port form
    llm = ollama_create("llm", model="absent")
    assert llm.url == server.url
    with pytest.raises(LLMError, match="not found"):
        llm.generate(HI)
    assert len(server.calls("/api/chat")) == 1


def test_config_host_wins_over_env(
    ollama_serve: Serve, ollama_create: Create, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = ollama_serve(chat=False)
    monkeypatch.setenv("OLLAMA_HOST", closed_port_url())
    llm = ollama_create("llm", host=server.url, model="absent")
    with pytest.raises(LLMError, match="not found"):
        llm.generate(HI)


def test_images_go_as_base64_for_vision_models(ollama_serve: Serve, ollama_create: Create) -> None:
    server = ollama_serve()
    png = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
        ],
    }
    text_only = ollama_create("llm", host=server.url, model=CHAT_MODEL)
    with pytest.raises(ValidationError, match="image"):
        text_only.generate([message])
    assert server.calls("/api/chat") == []
    vision = ollama_create("llm", host=server.url, model=CHAT_MODEL, vision=True)
    assert vision.capabilities.vision and vision.capabilities.json_schema
    with pytest.raises(LLMError, match="missing data required for image input"):
        vision.generate([message])  # SmolLM2 has no vision: the server says so
    [sent] = server.calls("/api/chat")
    assert sent["messages"] == [{"role": "user", "content": "What is this?", "images": [png]}]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"response_format": "yaml"}, "response_format"),
        ({"response_format": PERSON}, "bare dict"),
        ({"temperature": 3.0}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"tools": [{"type": "function"}]}, "tool spec"),
    ],
)
def test_bad_arguments_are_rejected_without_io(
    ollama_serve: Serve, ollama_create: Create, kwargs: dict[str, Any], match: str
) -> None:
    server = ollama_serve(chat=False)
    llm = ollama_create("llm", host=server.url, model=CHAT_MODEL)
    with pytest.raises(ValidationError, match=match):
        llm.generate(HI, **kwargs)
    assert server.requests == []


def test_tools_disabled_in_config_are_rejected(ollama_create: Create) -> None:
    llm = ollama_create("llm", host=closed_port_url(), model=CHAT_MODEL, tools=False)
    assert not llm.capabilities.tools
    with pytest.raises(ValidationError, match="tools: false"):
        llm.generate(HI, tools=[{"name": "f", "parameters": {"type": "object"}}])


def test_closed_provider_raises(ollama_create: Create) -> None:
    llm = ollama_create("llm", host=closed_port_url(), model=CHAT_MODEL)
    llm.close()
    llm.close()
    with pytest.raises(LLMError, match="closed"):
        llm.generate(HI)
