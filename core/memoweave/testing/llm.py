"""``LLMConformance``: the standard suite every LLM plugin runs.

Subclass it and override the ``llm`` fixture (any scope) yielding a provider built through
the registry. Remote providers also set ``remote = True`` and override
``provider_for_url(self, base_url)``. The suite makes about twelve short generate calls;
``max_tokens_json`` bounds the small JSON ones and ``max_tokens_answer`` the answers to
the core's own schemas (raise them for verbose models).

Structured output is checked with the EXACT :class:`~memoweave.providers.llm.ResponseSchema`
objects the core's strategies send (:func:`memoweave.memory.schemas.core_response_schemas`:
additive with and without relations, decide's two steps, procedural, vision description),
under the core's own prompts: a provider claiming ``json_schema`` must return answers valid
against each schema and readable by the core.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from memoweave.errors import LLMError, MemoweaveError, ValidationError
from memoweave.memory.prompts import load_prompt
from memoweave.memory.schemas import ANSWER_MODELS, core_response_schemas
from memoweave.providers.llm import LLM, LLMResponse, ResponseSchema, Usage
from memoweave.testing.guard import StandardTests
from memoweave.testing.model_base import RemoteProviderSupport, check_http_500, check_unreachable

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
    "additionalProperties": False,
}
#: The core's system prompt(s) and a tiny input for each role of ``core_response_schemas()``.
CORE_INPUTS: dict[str, tuple[tuple[str, ...], str]] = {
    "additive": (
        ("additive_v2",),
        "Observation date: 2023-05-08 (Monday)\n\nEXISTING MEMORIES:\n1. Alice lives in "
        "Lisbon\n\nEARLIER MESSAGES:\n(none)\n\nNEW MESSAGES:\n[1] Alice: I moved to Berlin.",
    ),
    "additive_graph": (
        ("additive_v2", "additive_graph_v1"),
        "Observation date: 2023-05-08 (Monday)\n\nEXISTING MEMORIES:\n(none)\n\nEARLIER "
        "MESSAGES:\n(none)\n\nNEW MESSAGES:\n[1] Alice: I adopted a dog named Max.",
    ),
    "decide_facts": (
        ("decide_extract_v2",),
        "Observation date: 2023-05-08 (Monday)\n\nEARLIER MESSAGES:\n(none)\n\n"
        "NEW MESSAGES:\n[1] Alice: I am a vegetarian.",
    ),
    "decide_events": (
        ("decide_update_v1",),
        "EXISTING MEMORIES:\n1. Alice lives in Lisbon\n\nNEW FACTS:\n- Alice lives in Berlin",
    ),
    "procedural": (
        ("procedural_v2",),
        "EXECUTION HISTORY:\n[1] User: Count the rows of data.csv.\n[2] Assistant: "
        "Opened data.csv; it has 42 rows.",
    ),
    "vision": (("vision_v2",), "(The image shows a red bicycle leaning on a white wall.)"),
}


def core_messages(role: str) -> list[dict[str, Any]]:
    """The system and user messages the kit sends with the core's schema for ``role``."""
    prompts, user = CORE_INPUTS[role]
    system = "\n\n".join(load_prompt(name) for name in prompts)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "integer": (int,), "number": (int, float), "null": (type(None),),
}  # fmt: skip


def schema_errors(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """A tiny JSON-schema checker (type, anyOf, required, properties,
    additionalProperties: false, items, enum)."""
    errors: list[str] = []
    if "anyOf" in schema:
        branches = [schema_errors(value, sub, path) for sub in schema["anyOf"]]
        if all(branches):
            return [f"{path}: matches no anyOf branch ({branches[0][0]})"]
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
        if schema.get("additionalProperties") is False:
            known = schema.get("properties", {})
            errors += [f"{path}: unexpected key {key!r}" for key in value if key not in known]
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                errors += schema_errors(value[key], sub, f"{path}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += schema_errors(item, schema["items"], f"{path}[{i}]")
    return errors


#: An agent's run, for the procedural strategy's end-to-end tests.
AGENT_RUN: list[dict[str, str]] = [
    {"role": "user", "content": "Count the rows of data.csv."},
    {"role": "assistant", "content": "Opened data.csv; it has 42 rows."},
]


def assert_adds_stored(memory: Any, results: list[dict[str, Any]], **scope: str) -> None:
    """An ``add`` wrote something, and every ADD of its ``results`` is stored with its
    text in the scope (for end-to-end tests of a real LLM through ``Memory.add``)."""
    stored = {m["id"]: m["memory"] for m in memory.get_all(**scope)["results"]}
    adds = {r["id"]: r["memory"] for r in results if r["event"] == "ADD"}
    assert adds, f"the add wrote no memory: {results}"
    assert adds.items() <= stored.items(), (adds, stored)


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
    max_tokens_answer: int = 192

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
                response_format=ResponseSchema("city_population", copy.deepcopy(SCHEMA)),
                temperature=0.0,
                max_tokens=self.max_tokens_json,
            )
        )
        value = _json_object(response.text)
        if llm.capabilities.json_schema:
            assert not schema_errors(value, SCHEMA), schema_errors(value, SCHEMA)

    @pytest.mark.parametrize("role", sorted(CORE_INPUTS))
    def test_core_schema(self, llm: LLM, role: str) -> None:
        """Each schema the core sends (``role``) gives an answer the core can read.

        Troubleshooting: pass the ``ResponseSchema`` to the server as its contract says
        (``schema`` unchanged, ``name`` and ``strict`` where the API has them); never
        mutate it. With ``capabilities.json_schema`` the answer must validate against the
        schema (the server enforces it); without it, return the JSON object the model
        wrote, or raise ``LLMError`` with the raw answer in ``details["text"]``.
        """
        sent = core_response_schemas()[role]
        pristine = copy.deepcopy(sent.schema)
        messages = core_messages(role)
        try:
            response = _check_response(
                llm.generate(
                    messages,
                    response_format=sent,
                    temperature=0.0,
                    max_tokens=self.max_tokens_answer,
                )
            )
        except LLMError as exc:
            if llm.capabilities.json_schema or not isinstance(exc.details.get("text"), str):
                raise
            return  # a weak mode may fail; it said so with the raw answer
        finally:
            assert sent.schema == pristine, "the provider mutated the ResponseSchema"
        value = _json_object(response.text)
        if llm.capabilities.json_schema:
            assert not schema_errors(value, sent.schema), schema_errors(value, sent.schema)
            ANSWER_MODELS[role].model_validate(value)

    def test_bare_schema_dict_is_rejected(self, llm: LLM) -> None:
        """A bare dict as ``response_format`` is a ``ValidationError``, before any request.

        Troubleshooting: call :func:`memoweave.providers.llm.check_response_format` first
        in ``generate``; only ``None``, ``"json_object"`` and ``ResponseSchema`` are valid.
        """
        with pytest.raises(ValidationError):
            llm.generate(
                [{"role": "user", "content": "Say hi."}],
                response_format=SCHEMA,  # type: ignore[arg-type]  # a bare dict: the point
                max_tokens=4,
            )

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


__all__ = [
    "AGENT_RUN",
    "CORE_INPUTS",
    "SCHEMA",
    "LLMConformance",
    "assert_adds_stored",
    "schema_errors",
]
