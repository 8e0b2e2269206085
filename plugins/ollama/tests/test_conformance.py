"""The memoweave conformance kits against the Ollama protocol server (llama.cpp-backed)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
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

CHAT_MODEL = "smollm2:135m"
EMBED_MODEL = "all-minilm"


def _remote(kind: str, base_url: str, model: str) -> Any:
    config = {"host": base_url, "model": model, "max_retries": 0, "timeout": 5.0}
    return load_registry().create(kind, "ollama", config)


@pytest.fixture
def ollama_kit_llm(ollama_serve: Callable[..., Any]) -> Iterator[LLM]:
    """The LLM both LLM suites run against (JSON through ``format``)."""
    server = ollama_serve(chat=True)
    config = {"host": server.url, "model": CHAT_MODEL, "max_retries": 0}
    provider = load_registry().create("llm", "ollama", config)
    yield provider
    provider.close()


@pytest.fixture
def ollama_kit_embedder(ollama_serve: Callable[..., Any]) -> Iterator[Embedder]:
    """The embedder both embedder suites run against."""
    server = ollama_serve(chat=False, embed=True)
    config = {"host": server.url, "model": EMBED_MODEL, "max_retries": 0}
    provider = load_registry().create("embedder", "ollama", config)
    yield provider
    provider.close()


class _Chat:
    remote = True

    def provider_for_url(self, base_url: str) -> LLM:
        return _remote("llm", base_url, CHAT_MODEL)


class _Embeddings:
    remote = True
    semantic = True

    def provider_for_url(self, base_url: str) -> Embedder:
        return _remote("embedder", base_url, EMBED_MODEL)


class TestOllamaLLMConformance(_Chat, LLMConformance):
    """SmolLM2-135M-Instruct behind the protocol server; JSON through ``format``."""

    @pytest.fixture
    def llm(self, ollama_kit_llm: LLM) -> LLM:
        return ollama_kit_llm


class TestOllamaEmbedderConformance(_Embeddings, EmbedderConformance):
    """all-MiniLM-L6-v2 (GGUF) behind the protocol server's /api/embed."""

    @pytest.fixture
    def embedder(self, ollama_kit_embedder: Embedder) -> Embedder:
        return ollama_kit_embedder


class TestOllamaLLMAsyncConformance(_Chat, AsyncLLMConformance):
    """The LLM suite through ``agenerate`` (``ollama.AsyncClient``)."""

    @pytest.fixture
    def async_llm(self, ollama_kit_llm: LLM) -> LLM:
        return ollama_kit_llm


class TestOllamaEmbedderAsyncConformance(_Embeddings, AsyncEmbedderConformance):
    """The embedder suite through ``aembed`` (``ollama.AsyncClient``)."""

    @pytest.fixture
    def async_embedder(self, ollama_kit_embedder: Embedder) -> Embedder:
        return ollama_kit_embedder
