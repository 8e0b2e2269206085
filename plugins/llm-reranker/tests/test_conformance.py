"""The `llm` reranker end to end with a real model (see conftest.py), via the registry: the
conformance kit, then the plugin's own checks."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memoweave.errors import ConfigError, ProviderNotFound, RerankerError, ValidationError
from memoweave.plugins import load_registry
from memoweave.providers.reranker import Reranker
from memoweave.testing import RerankerConformance

DOCS = [
    "The user enjoys playing tennis on weekends.",
    "The user lives in Lisbon, Portugal.",
    "Bananas are rich in potassium.",
]


def llm_spec(base_url: str, **extra: Any) -> dict[str, Any]:
    """The reranker's ``llm`` spec for an OpenAI-compatible server at ``base_url``."""
    return {
        "provider": "openai",
        "config": {
            "base_url": f"{base_url}/v1",
            "api_key": "sk-local-test",
            "model": "smollm2",
            "structured_output": "json_object_schema",
            "max_retries": 0,
            "timeout": 120.0,
            **extra,
        },
    }


def _reranker(base_url: str, llm_extra: dict[str, Any] | None = None, **config: Any) -> Any:
    spec = {"llm": llm_spec(base_url, **(llm_extra or {})), **config}
    return load_registry().create("reranker", "llm", spec)


class TestLLMRerankerConformance(RerankerConformance):
    # SmolLM2-135M is far too small to judge relevance reliably: plumbing checks only.
    semantic = False
    remote = True

    @pytest.fixture
    def reranker(self, llmrr_server: str) -> Iterator[Reranker]:
        provider = _reranker(llmrr_server)
        yield provider
        provider.close()

    def provider_for_url(self, base_url: str) -> Any:
        return _reranker(base_url, {"timeout": 5.0})


def test_every_document_gets_a_model_score(llmrr_server: str) -> None:
    reranker = _reranker(llmrr_server)
    try:
        ranked = reranker.rerank("Where does the user live?", DOCS, 3)
    finally:
        reranker.close()
    assert sorted(r.index for r in ranked) == [0, 1, 2]
    scores = [r.score for r in ranked]
    assert scores == sorted(scores, reverse=True)
    # ties keep the input order (integer scores tie often)
    for i in range(len(ranked) - 1):
        assert ranked[i].score > ranked[i + 1].score or ranked[i].index < ranked[i + 1].index


def test_truncated_answers_raise_after_one_repair(llmrr_server: str) -> None:
    """max_tokens=2 cuts every answer: the first try and the repair both fail."""
    reranker = _reranker(llmrr_server, max_tokens=2)
    try:
        with pytest.raises(RerankerError) as info:
            reranker.rerank("Where does the user live?", DOCS, 2)
    finally:
        reranker.close()
    assert "after 2 attempt(s)" in info.value.message
    assert info.value.details["reason"]
    assert "answer" in info.value.details


def test_too_many_documents_is_a_validation_error(llmrr_server: str) -> None:
    reranker = _reranker(llmrr_server, max_documents=2)
    try:
        with pytest.raises(ValidationError):
            reranker.rerank("q", DOCS, 1)
    finally:
        reranker.close()


def test_constructor_rejects_a_non_llm() -> None:
    from memoweave_llm_reranker.config import LLMRerankerConfig
    from memoweave_llm_reranker.reranker import LLMReranker

    config = LLMRerankerConfig.model_validate({"llm": {"provider": "openai"}})
    with pytest.raises(ValidationError):
        LLMReranker(object(), config)  # type: ignore[arg-type]


def test_unknown_llm_provider_is_reported() -> None:
    with pytest.raises(ProviderNotFound):
        load_registry().create("reranker", "llm", {"llm": {"provider": "no-such-llm"}})


@pytest.mark.parametrize(
    "config",
    [{}, {"llm": {"provider": ""}}, {"llm": {"provider": "openai"}, "repair_retries": 9}],
)
def test_invalid_config_is_a_config_error(config: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        load_registry().create("reranker", "llm", config)
