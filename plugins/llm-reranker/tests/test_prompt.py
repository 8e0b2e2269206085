"""The prompt builder, the answer schema and the repair turn (pure functions)."""

from __future__ import annotations

from memoweave_llm_reranker.prompt import build_messages, repair_messages, score_schema


def test_documents_are_numbered_flattened_and_clipped() -> None:
    messages = build_messages("where?", ["first\n\ndoc", "", "x" * 50], max_chars=20)
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert "Query: where?" in user
    assert "[1] first doc" in user
    assert "[2] (empty)" in user
    assert "[3] " + "x" * 19 + "…" in user
    assert "exactly 3 integers" in user


def test_schema_fixes_the_number_of_scores() -> None:
    sent = score_schema(4)
    schema = sent.schema
    assert sent.name == "rerank_scores"
    scores = schema["properties"]["scores"]
    assert scores["minItems"] == scores["maxItems"] == 4
    assert schema["required"] == ["scores"]


def test_repair_turn_shows_the_answer_and_the_reason() -> None:
    base = build_messages("q", ["a", "b"], max_chars=100)
    repaired = repair_messages(base, '{"scores": [1]}', "expected 2 scores, got 1", 2)
    assert repaired[: len(base)] == base
    assert repaired[-2] == {"role": "assistant", "content": '{"scores": [1]}'}
    assert "expected 2 scores, got 1" in repaired[-1]["content"]
    assert "exactly 2 integers" in repaired[-1]["content"]
