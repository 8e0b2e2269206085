"""Registration, configuration and the structured-output helpers (no server needed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from memoweave_openai.structured import (
    JsonRequest,
    extract_json_object,
    instruction,
    json_request,
    response_format_param,
    with_instruction,
)

from memoweave.errors import ConfigError, ValidationError
from memoweave.plugins import load_registry
from memoweave.providers.llm import ResponseSchema

SCHEMA = {"type": "object", "properties": {"n": {"type": "string"}}}


def test_registration_imports_no_sdk() -> None:
    code = (
        "import sys; from memoweave.plugins import load_registry; r = load_registry();"
        "print(r.info('llm', 'openai').distribution, r.info('embedder', 'openai').distribution,"
        "'openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["memoweave-openai", "memoweave-openai", "False"]


@pytest.mark.parametrize("kind", ["llm", "embedder"])
def test_missing_key_for_openai_is_a_config_error(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError) as info:
        load_registry().create(kind, "openai", {})
    assert "OPENAI_API_KEY" in info.value.hint and "base_url" in info.value.hint
    assert info.value.details["path"] == "config.api_key"


def test_custom_base_url_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = load_registry().create("llm", "openai", {"base_url": "http://127.0.0.1:1/v1/"})
    try:
        assert llm.endpoint.url == "http://127.0.0.1:1/v1"
        caps = llm.capabilities
        assert (caps.vision, caps.tools, caps.json_schema) == (False, True, True)
    finally:
        llm.close()


def test_base_url_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:2/v1")
    embedder = load_registry().create("embedder", "openai", {})
    try:
        assert embedder.endpoint.url == "http://127.0.0.1:2/v1"
    finally:
        embedder.close()


def test_azure_needs_api_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_VERSION", raising=False)
    config = {"azure_endpoint": "https://x.openai.azure.com", "api_key": "k"}
    with pytest.raises(ConfigError, match="API version") as info:
        load_registry().create("llm", "openai", config)
    assert info.value.details["path"] == "config.api_version"


@pytest.mark.parametrize(
    ("kind", "config", "fragment"),
    [
        ("llm", {"base_url": "localhost:8000"}, "http"),
        ("llm", {"base_url": "http://a/v1", "azure_endpoint": "https://b"}, "not both"),
        ("llm", {"structured_output": "xml"}, "structured_output"),
        ("llm", {"timeout": 0}, "timeout"),
        ("llm", {"max_retries": -1}, "max_retries"),
        ("llm", {"temprature": 0.2}, "temprature"),
        ("embedder", {"dims": 384, "dimensions": 256}, "contradicts"),
        ("embedder", {"batch_size": 0}, "batch_size"),
    ],
)
def test_invalid_config_is_a_config_error(kind: str, config: dict, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        load_registry().create(kind, "openai", config)


def test_json_request_follows_the_core_contract() -> None:
    assert json_request(None) is None
    assert json_request("json_object") == JsonRequest()
    named = json_request(ResponseSchema("Person_card", SCHEMA, strict=False))
    assert named == JsonRequest(schema=SCHEMA, name="Person_card", strict=False)
    wrapper = {"type": "json_schema", "json_schema": {"name": "p", "schema": SCHEMA}}
    for bad in ("yaml", SCHEMA, wrapper):  # a dict is ambiguous: wrapper or schema?
        with pytest.raises(ValidationError):
            json_request(bad)


def test_response_format_per_mode() -> None:
    request = JsonRequest(schema=SCHEMA, name="p", strict=True)
    assert response_format_param(request, "json_schema") == {
        "type": "json_schema",
        "json_schema": {"name": "p", "schema": SCHEMA, "strict": True},
    }
    assert response_format_param(request, "json_schema", strict=False) == {
        "type": "json_schema",
        "json_schema": {"name": "p", "schema": SCHEMA},
    }
    assert response_format_param(request, "json_object_schema") == {
        "type": "json_object",
        "schema": SCHEMA,
    }
    assert response_format_param(request, "json_object") == {"type": "json_object"}
    assert response_format_param(request, "prompt") is None
    assert response_format_param(JsonRequest(), "json_schema") == {"type": "json_object"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ('Sure! Here it is: {"a": "}{"} Hope that helps {"b": 2}', {"a": "}{"}),
        ('[1, 2] then {"k": {"n": null}}', {"k": {"n": None}}),
    ],
)
def test_extract_json_object(text: str, expected: dict) -> None:
    extracted = extract_json_object(text)
    assert extracted is not None and json.loads(extracted) == expected


@pytest.mark.parametrize("text", ["", "no json here", '{"a": 1', "[1, 2]", "{'a': 1}"])
def test_extract_json_object_rejects_non_objects(text: str) -> None:
    assert extract_json_object(text) is None


def test_instruction_goes_into_the_system_prompt_without_mutating_input() -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    out = with_instruction(messages, "Answer in JSON.")
    assert out[0]["content"] == "Be brief.\n\nAnswer in JSON."
    assert messages[0]["content"] == "Be brief."
    bare = with_instruction([{"role": "user", "content": "hi"}], "Answer in JSON.")
    assert bare[0] == {"role": "system", "content": "Answer in JSON."}


def test_schema_goes_into_the_prompt_only_when_the_server_does_not_enforce_it() -> None:
    request = JsonRequest(schema=SCHEMA, name="p", strict=True)
    assert instruction(request, "json_schema") is None
    assert instruction(request, "json_object_schema") is None  # the grammar enforces it
    for mode in ("json_object", "prompt"):
        assert json.dumps(SCHEMA) in (instruction(request, mode) or "")
    assert "JSON object" in (instruction(JsonRequest(), "json_schema") or "")
