"""The core's schemas through llama.cpp's own JSON-schema-to-GBNF converter and the real
server (issue 17: ``maxLength: 2000`` became a 2,000-deep grammar rule that killed
``llama_cpp.server``). Each schema converts to a small grammar without deep repetitions,
and the converted grammar drives a real completion whose answer the core can read."""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

import pytest

from memoweave.memory.schemas import ANSWER_MODELS, core_response_schemas
from memoweave.testing.llm import core_messages

llama_grammar = pytest.importorskip("llama_cpp.llama_grammar", reason="needs llama-cpp-python")

#: Above these a schema carries a length or count bound into the grammar: the converter
#: writes ``maxLength: N`` as N nested optional groups (an integer is 15 deep).
MAX_RULES = 40
MAX_DEPTH = 20
_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]')


def _depth(rule: str) -> int:
    deepest = depth = 0
    for char in _LITERAL.sub("", rule):
        depth += {"(": 1, ")": -1}.get(char, 0)
        deepest = max(deepest, depth)
    return deepest


def grammar_problems(gbnf: str) -> list[str]:
    """Why a GBNF grammar is too big for constrained decoding (empty when it is fine)."""
    rules = [line for line in gbnf.splitlines() if "::=" in line]
    problems = [f"{len(rules)} rules"] if len(rules) > MAX_RULES else []
    problems += [
        f"{rule.split('::=')[0].strip()}: groups nested {_depth(rule)} deep"
        for rule in rules
        if _depth(rule) > MAX_DEPTH
    ]
    return problems


def test_the_check_catches_a_length_bound() -> None:
    bounded = {"type": "object", "properties": {"text": {"type": "string", "maxLength": 2000}},
               "required": ["text"]}  # fmt: skip
    assert grammar_problems(llama_grammar.json_schema_to_gbnf(json.dumps(bounded)))


@pytest.mark.parametrize("role", sorted(ANSWER_MODELS))
def test_schema_converts_to_a_small_grammar_the_server_runs(
    role: str, openai_chat_server: Any
) -> None:
    gbnf = llama_grammar.json_schema_to_gbnf(json.dumps(core_response_schemas()[role].schema))
    assert grammar_problems(gbnf) == []
    body = {
        "model": openai_chat_server.alias,
        "messages": core_messages(role),
        "grammar": gbnf,  # llama-cpp-python's extension: the converted grammar itself
        "temperature": 0.0,
        "max_tokens": 192,
    }
    request = urllib.request.Request(
        openai_chat_server.url + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        answer = json.load(response)["choices"][0]
    assert openai_chat_server.alive()
    if answer["finish_reason"] == "stop":
        ANSWER_MODELS[role].model_validate_json(answer["message"]["content"])
