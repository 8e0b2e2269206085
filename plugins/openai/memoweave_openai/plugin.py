"""memoweave-openai: LLM and embedder for OpenAI and OpenAI-compatible servers.

Registers the LLM ``openai`` and the embedder ``openai`` (entry point group ``memoweave``).
Registration does no I/O and does not import the ``openai`` SDK; the factories do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memoweave.hookspecs import Register, hookimpl
from memoweave_openai.config import OpenAIEmbedderConfig, OpenAILLMConfig

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""

if TYPE_CHECKING:
    from memoweave_openai.embedder import OpenAIEmbedder
    from memoweave_openai.llm import OpenAILLM


def create_llm(config: OpenAILLMConfig) -> OpenAILLM:
    """Factory of the ``openai`` LLM (imports the SDK, resolves the API key)."""
    from memoweave_openai.llm import OpenAILLM

    return OpenAILLM.from_config(config)


def create_embedder(config: OpenAIEmbedderConfig) -> OpenAIEmbedder:
    """Factory of the ``openai`` embedder (imports the SDK, resolves the API key)."""
    from memoweave_openai.embedder import OpenAIEmbedder

    return OpenAIEmbedder.from_config(config)


@hookimpl
def register_llms(register: Register) -> None:
    """Register the ``openai`` LLM."""
    register(
        "openai",
        create_llm,
        config_model=OpenAILLMConfig,
        description="OpenAI, Azure OpenAI or any OpenAI-compatible chat server "
        "(vLLM, llama.cpp, LM Studio, DeepSeek...)",
    )


@hookimpl
def register_embedders(register: Register) -> None:
    """Register the ``openai`` embedder."""
    register(
        "openai",
        create_embedder,
        config_model=OpenAIEmbedderConfig,
        description="OpenAI, Azure OpenAI or any OpenAI-compatible /embeddings endpoint",
    )
