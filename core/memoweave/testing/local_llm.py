"""A real small LLM for any test of the session: ``local_llm_server``.

A session fixture (registered by the kit's pytest plugin, so every test directory sees it)
that starts SmolLM2-135M-Instruct behind llama-cpp-python's OpenAI-compatible server
(:mod:`memoweave.local_llm`) ONCE per test session and stops it at the end; plugins that
need a real LLM (memoweave-openai, the LLM reranker, the LLM pipeline tests) share it.
It skips with the install hint when llama-cpp-python's server or the packaged model is
missing. ``server.url`` has no path (append ``/v1``); ``server.alias`` is the model name.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memoweave.errors import ConfigError
from memoweave.local_llm import (
    SMOLLM2_ALIAS,
    LlamaServer,
    llama_server_available,
    packaged_gguf,
    start_llama_server,
)

#: Context window of the shared server (the reranker's prompts need more than 2,048).
LOCAL_LLM_CONTEXT = 4096


@pytest.fixture(scope="session")
def local_llm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The session's llama.cpp server running the packaged SmolLM2 (see module docstring)."""
    if not llama_server_available():
        pytest.skip("needs llama-cpp-python[server] (pip install 'llama-cpp-python[server]')")
    try:
        model = packaged_gguf()
    except ConfigError as exc:
        pytest.skip(exc.message)
    server = start_llama_server(
        model, SMOLLM2_ALIAS, tmp_path_factory.mktemp("local-llm"), n_ctx=LOCAL_LLM_CONTEXT
    )
    print(f"\n[memoweave] local LLM server ready in {server.startup_seconds:.1f}s")
    yield server
    server.stop()


__all__ = ["LOCAL_LLM_CONTEXT", "local_llm_server"]
