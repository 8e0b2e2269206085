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


class TestOllamaLLMConformance(LLMConformance):
    """SmolLM2-135M-Instruct behind the protocol server; JSON through ``format``."""

    remote = True

    @pytest.fixture
    def llm(self, ollama_serve: Callable[..., Any]) -> Iterator[LLM]:
        server = ollama_serve(chat=True)
        provider = load_registry().create(
            "llm", "ollama", {"host": server.url, "model": CHAT_MODEL, "max_retries": 0}
        )
        yield provider
        provider.close()

    def provider_for_url(self, base_url: str) -> LLM:
        return _remote("llm", base_url, CHAT_MODEL)


class TestOllamaEmbedderConformance(EmbedderConformance):
    """all-MiniLM-L6-v2 (GGUF) behind the protocol server's /api/embed."""

    remote = True
    semantic = True

    @pytest.fixture
    def embedder(self, ollama_serve: Callable[..., Any]) -> Iterator[Embedder]:
        server = ollama_serve(chat=False, embed=True)
        provider = load_registry().create(
            "embedder", "ollama", {"host": server.url, "model": EMBED_MODEL, "max_retries": 0}
        )
        yield provider
        provider.close()

    def provider_for_url(self, base_url: str) -> Embedder:
        return _remote("embedder", base_url, EMBED_MODEL)


class TestOllamaLLMAsyncConformance(AsyncLLMConformance):
    """The LLM suite through ``agenerate`` (``ollama.AsyncClient``)."""

    remote = True

    @pytest.fixture
    def async_llm(self, ollama_serve: Callable[..., Any]) -> Iterator[LLM]:
        server = ollama_serve(chat=True)
        provider = load_registry().create(
            "llm", "ollama", {"host": server.url, "model": CHAT_MODEL, "max_retries": 0}
        )
        yield provider
        provider.close()

    def provider_for_url(self, base_url: str) -> LLM:
        return _remote("llm", base_url, CHAT_MODEL)


class TestOllamaEmbedderAsyncConformance(AsyncEmbedderConformance):
    """The embedder suite through ``aembed`` (``ollama.AsyncClient``)."""

    remote = True
    semantic = True

    @pytest.fixture
    def async_embedder(self, ollama_serve: Callable[..., Any]) -> Iterator[Embedder]:
        server = ollama_serve(chat=False, embed=True)
        provider = load_registry().create(
            "embedder", "ollama", {"host": server.url, "model": EMBED_MODEL, "max_retries": 0}
        )
        yield provider
        provider.close()

    def provider_for_url(self, base_url: str) -> Embedder:
        return _remote("embedder", base_url, EMBED_MODEL)
