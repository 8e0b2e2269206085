"""The schemas the core sends are made for constrained decoding (issue 17): checked
statically here; plugins/openai/tests/test_core_schemas.py runs them through llama.cpp's
own converter and the real server."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from memoweave.errors import ValidationError
from memoweave.memory.schemas import (
    ANSWER_MODELS,
    core_response_schemas,
    response_schema,
    strict_json_schema,
)
from memoweave.providers.llm import ResponseSchema, check_response_format

#: Every keyword the schemas may use: OpenAI strict mode, llama.cpp's GBNF converter and
#: Ollama's format all handle these without size blow-ups. Length, count, range and
#: pattern bounds are validated after parsing instead.
ALLOWED = {"type", "properties", "required", "additionalProperties", "items", "enum", "anyOf",
           "description"}  # fmt: skip


def _nodes(node: Any, path: str = "$") -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(node, dict):
        return []
    found = [(path, node)]
    for key, sub in node.get("properties", {}).items():
        found += _nodes(sub, f"{path}.{key}")
    if "items" in node:
        found += _nodes(node["items"], f"{path}[]")
    for n, sub in enumerate(node.get("anyOf", [])):
        found += _nodes(sub, f"{path}|{n}")
    return found


@pytest.mark.parametrize("role", sorted(ANSWER_MODELS))
def test_schema_is_grammar_safe_and_strict(role: str) -> None:
    sent = core_response_schemas()[role]
    assert sent.strict and sent.schema["type"] == "object"
    for path, node in _nodes(sent.schema):
        assert set(node) <= ALLOWED, f"{path}: {set(node) - ALLOWED}"
        if node.get("type") == "object":
            assert node["required"] == list(node["properties"]), path
            assert node["additionalProperties"] is False, path


def test_sent_schemas_are_fresh_copies() -> None:
    first = response_schema(ANSWER_MODELS["additive"])
    first.schema["properties"].clear()
    assert response_schema(ANSWER_MODELS["additive"]).schema["properties"]


def test_nested_models_are_inlined() -> None:
    class Leaf(BaseModel):
        name: str
        weight: float | None = None

    class Tree(BaseModel):
        leaves: list[Leaf] = []

    schema = strict_json_schema(Tree)
    assert "$defs" not in schema and "title" not in str(schema)
    leaf = schema["properties"]["leaves"]["items"]
    assert leaf["required"] == ["name", "weight"] and leaf["additionalProperties"] is False


@pytest.mark.parametrize(
    ("name", "schema"),
    [("has space", {"type": "object"}), ("x" * 65, {"type": "object"}), ("ok", {"type": "array"}),
     ("ok", {"type": "object", "default": object()})],
)  # fmt: skip
def test_response_schema_checks_itself(name: str, schema: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ResponseSchema(name, schema)


def test_check_response_format_allows_only_the_contract() -> None:
    sent = core_response_schemas()["vision"]
    assert check_response_format(None) is None
    assert check_response_format("json_object") == "json_object"
    assert check_response_format(sent) is sent
    for bad in ({"name": "x", "schema": {"type": "object"}}, {"type": "object"}, "json", 3):
        with pytest.raises(ValidationError):
            check_response_format(bad)
