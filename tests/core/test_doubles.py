"""The core's test doubles behave as documented (they underpin the Memory tests)."""

from __future__ import annotations

import json
import math

import pytest

from memoweave.errors import EmbeddingError, LLMError, ValidationError
from memoweave.providers.llm import LLMCapabilities, LLMResponse, ResponseSchema, ToolCall, Usage
from memoweave.testing.doubles import MALFORMED_JSON, HashingEmbedder, ScriptedLLM


def _msgs(text: str) -> list[dict]:
    return [{"role": "system", "content": "sys!"}, {"role": "user", "content": text}]


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


# -- ScriptedLLM --------------------------------------------------------------------------


def test_scripted_answers_in_order_with_json_dicts() -> None:
    llm = ScriptedLLM(["first", {"facts": ["likes tea", "東京"]}, [1, 2]])
    assert llm.remaining == 3
    assert llm.generate(_msgs("a")).text == "first"
    second = llm.generate(_msgs("b"), response_format="json_object")
    assert json.loads(second.text) == {"facts": ["likes tea", "東京"]}
    assert json.loads(llm.generate(_msgs("c")).text) == [1, 2]
    assert llm.remaining == 0


def test_empty_queue_raises_or_uses_default() -> None:
    llm = ScriptedLLM(["only"])
    llm.generate(_msgs("x"))
    with pytest.raises(LLMError, match="no scripted answer left for call #2"):
        llm.generate(_msgs("y"))
    fallback = ScriptedLLM(default={"facts": []})
    assert json.loads(fallback.generate(_msgs("x")).text) == {"facts": []}
    assert json.loads(fallback.generate(_msgs("y")).text) == {"facts": []}


def test_exceptions_callables_and_ready_responses() -> None:
    ready = LLMResponse(text="", tool_calls=[ToolCall("add", {"x": 1}, "c1")], usage=Usage(3, 4))
    llm = ScriptedLLM(
        [
            LLMError("boom"),
            TimeoutError,
            lambda messages: f"echo {messages[-1]['content']}",
            lambda messages: {"n": len(messages)},
            ready,
        ]
    )
    with pytest.raises(LLMError, match="boom"):
        llm.generate(_msgs("1"))
    with pytest.raises(TimeoutError):
        llm.generate(_msgs("2"))
    assert llm.generate(_msgs("hello")).text == "echo hello"
    assert json.loads(llm.generate(_msgs("x")).text) == {"n": 2}
    assert llm.generate(_msgs("y")) is ready
    assert len(llm.calls) == 5  # failed calls are recorded too


def test_fail_next_and_malformed_next_jump_the_queue() -> None:
    llm = ScriptedLLM(["a"])
    llm.fail_next()
    llm.push("b")
    with pytest.raises(LLMError, match="fail_next"):
        llm.generate(_msgs("x"))
    llm.malformed_next()
    text = llm.generate(_msgs("x")).text
    assert text == MALFORMED_JSON
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    llm.fail_next(ValueError("custom"))
    with pytest.raises(ValueError, match="custom"):
        llm.generate(_msgs("x"))
    assert [llm.generate(_msgs("x")).text for _ in range(2)] == ["a", "b"]


def test_calls_are_recorded_as_copies_with_kwargs() -> None:
    llm = ScriptedLLM(["ok"])
    messages = _msgs("original")
    schema = ResponseSchema("anything", {"type": "object"})
    llm.generate(messages, response_format=schema, temperature=0.1, max_tokens=50)
    messages[1]["content"] = "mutated"
    call = llm.calls[0]
    assert call.messages[1]["content"] == "original"
    assert call.kwargs == {
        "response_format": schema,
        "tools": None,
        "temperature": 0.1,
        "max_tokens": 50,
    }


def test_usage_is_characters_over_four() -> None:
    llm = ScriptedLLM(["x" * 40])
    parts = [{"type": "text", "text": "y" * 12}, {"type": "image_url", "image_url": {"url": "u"}}]
    response = llm.generate(
        [{"role": "user", "content": "z" * 20}, {"role": "user", "content": parts}]
    )
    assert response.usage == Usage(prompt_tokens=8, completion_tokens=10)
    assert response.usage.total_tokens == 18


def test_capabilities_and_validation() -> None:
    assert ScriptedLLM().capabilities.json_schema is True
    caps = LLMCapabilities(json_schema=False, json_object=False, vision=True)
    assert ScriptedLLM(capabilities=caps).capabilities is caps
    with pytest.raises(ValidationError):
        ScriptedLLM(latency_s=-1)


# -- HashingEmbedder ----------------------------------------------------------------------


def test_embeddings_are_deterministic_unit_vectors() -> None:
    texts = ["I like green tea", "東京でラーメン", "", "!!!", "Tea"]
    first = HashingEmbedder(dims=32).embed(texts)
    second = HashingEmbedder(dims=32).embed(texts, purpose="query")
    assert first == second
    assert all(len(v) == 32 and math.isclose(_cos(v, v), 1.0) for v in first)
    assert HashingEmbedder().dims == 64
    assert len(HashingEmbedder().embed(["a"])[0]) == 64


def test_shared_words_mean_higher_similarity() -> None:
    emb = HashingEmbedder()
    tea, tea2, car = emb.embed(["I like green tea", "green tea is what I like", "fast red cars"])
    assert _cos(tea, tea2) > _cos(tea, car) + 0.3
    upper, lower = emb.embed(["GREEN TEA", "green tea"])
    assert math.isclose(_cos(upper, lower), 1.0)


def test_calls_texts_and_failures_are_recorded() -> None:
    emb = HashingEmbedder(dims=16)
    assert emb.embed([]) == []
    emb.embed(["a", "b"])
    emb.fail_next()
    with pytest.raises(EmbeddingError, match="fail_next"):
        emb.embed(["c"])
    emb.embed(["d"])
    assert emb.calls == 4
    assert emb.texts == ["a", "b", "d"]


@pytest.mark.parametrize("bad", ["a string", ["ok", 3], None])
def test_embedder_rejects_non_string_input(bad: object) -> None:
    with pytest.raises(EmbeddingError):
        HashingEmbedder().embed(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("dims", [0, 1, True, 8.0])
def test_embedder_validates_dims(dims: object) -> None:
    with pytest.raises(ValidationError):
        HashingEmbedder(dims=dims)  # type: ignore[arg-type]


def test_response_format_outside_the_contract_is_rejected() -> None:
    llm = ScriptedLLM(["ok"])
    with pytest.raises(ValidationError, match="bare dict"):
        llm.generate(_msgs("x"), response_format={"type": "object"})
    assert llm.calls == [] and llm.remaining == 1
