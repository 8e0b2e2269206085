"""The packaged small model as a ready :class:`~memoweave.providers.llm.LLM`: the server of
:mod:`memoweave.local_llm.server` plus the ``openai`` provider (memoweave-openai) aimed at
it, for ``memoweave demo --local-llm``."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memoweave.errors import LLMError
from memoweave.local_llm.server import SMOLLM2_ALIAS, LlamaServer, packaged_gguf, start_llama_server
from memoweave.plugins import load_registry
from memoweave.providers.llm import LLM

#: ``extraction.max_answer_tokens`` for the demo on the packaged model: a 135M model
#: sometimes repeats itself until the budget runs out, and 2,048 tokens take minutes on a
#: busy CPU; a real answer of the demo needs under 200.
LOCAL_ANSWER_TOKENS = 512


@contextmanager
def local_llm() -> Iterator[tuple[LLM, LlamaServer]]:
    """Start SmolLM2 on 127.0.0.1 and yield ``(llm, server)``; both are stopped after.

    Raises ``ConfigError`` when llama-cpp-python's server, the packaged model or
    memoweave-openai is missing, ``LLMError`` when the server does not start."""
    model = packaged_gguf()
    registry = load_registry()
    registry.info("llm", "openai")  # ProviderNotFound (with the pip hint) before starting
    with tempfile.TemporaryDirectory(prefix="memoweave-local-llm-") as logs:
        try:
            server = start_llama_server(model, SMOLLM2_ALIAS, Path(logs), n_ctx=4096)
        except RuntimeError as exc:
            raise LLMError(
                "the local llama.cpp server did not start",
                hint="See details['log']; check that llama-cpp-python works on this machine.",
                details={"log": str(exc)[-2000:]},
            ) from exc
        with server:
            llm = registry.create(
                "llm",
                "openai",
                {
                    "base_url": server.url + "/v1",
                    "model": SMOLLM2_ALIAS,
                    "structured_output": "json_object_schema",
                    "max_retries": 0,
                    "timeout": 600.0,
                },
            )
            try:
                yield llm, server
            finally:
                llm.close()
