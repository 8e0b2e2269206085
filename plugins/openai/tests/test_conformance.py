"""The memoweave conformance kit against a real OpenAI-compatible server (llama_cpp.server)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memoweave.plugins import load_registry
from memoweave.providers.embedder import Embedder
from memoweave.providers.llm import LLM
from memoweave.testing import (
    AsyncEmbedderConformance,
    AsyncLLMConformance,
    EmbedderConformance,
    LLMConformance,
)

CHAT_ALIAS = "smollm2-135m"
EMBED_ALIAS = "all-minilm-l6-v2"


def _remote(kind: str, base_url: str, model: str) -> Any:
    config = {"base_url": base_url + "/v1", "model": model, "max_retries": 0, "timeout": 5.0}
    return load_registry().create(kind, "openai", config)


@pytest.fixture
def openai_kit_llm(openai_chat_server: Any) -> Iterator[LLM]:
    """The LLM both LLM suites run against (JSON through the server's schema grammar)."""
    config = {
        "base_url": openai_chat_server.url + "/v1",
        "model": CHAT_ALIAS,
        "structured_output": "json_object_schema",
        "max_retries": 0,
    }
    provider = load_registry().create("llm", "openai", config)
    yield provider
    provider.close()


@pytest.fixture
def openai_kit_embedder(openai_embed_server: Any) -> Iterator[Embedder]:
    """The embedder both embedder suites run against."""
    config = {"base_url": openai_embed_server.url + "/v1", "model": EMBED_ALIAS, "max_retries": 0}
    provider = load_registry().create("embedder", "openai", config)
    yield provider
    provider.close()


class _Chat:
    remote = True

    def provider_for_url(self, base_url: str) -> LLM:
        return _remote("llm", base_url, CHAT_ALIAS)


class _Embeddings:
    remote = True
    semantic = True

    def provider_for_url(self, base_url: str) -> Embedder:
        return _remote("embedder", base_url, EMBED_ALIAS)


class TestOpenAILLMConformance(_Chat, LLMConformance):
    """SmolLM2-135M-Instruct behind llama-cpp-python; JSON through its schema grammar."""

    @pytest.fixture
    def llm(self, openai_kit_llm: LLM) -> LLM:
        return openai_kit_llm


class TestOpenAIEmbedderConformance(_Embeddings, EmbedderConformance):
    """all-MiniLM-L6-v2 (GGUF) behind llama-cpp-python's /v1/embeddings."""

    @pytest.fixture
    def embedder(self, openai_kit_embedder: Embedder) -> Embedder:
        return openai_kit_embedder


class TestOpenAILLMAsyncConformance(_Chat, AsyncLLMConformance):
    """The LLM suite through ``agenerate`` (``AsyncOpenAI``) on the same server."""

    @pytest.fixture
    def async_llm(self, openai_kit_llm: LLM) -> LLM:
        return openai_kit_llm


class TestOpenAIEmbedderAsyncConformance(_Embeddings, AsyncEmbedderConformance):
    """The embedder suite through ``aembed`` (``AsyncOpenAI``) on the same server."""

    @pytest.fixture
    def async_embedder(self, openai_kit_embedder: Embedder) -> Embedder:
        return openai_kit_embedder
