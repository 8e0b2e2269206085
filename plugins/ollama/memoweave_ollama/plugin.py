"""memoweave-ollama: LLM and embedder for Ollama, through the official ``ollama`` client.

Registers the LLM ``ollama`` (``/api/chat``) and the embedder ``ollama`` (``/api/embed``)
in the entry point group ``memoweave``. Registration does no I/O and does not import the
``ollama`` client; the factories do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memoweave.hookspecs import Register, hookimpl
from memoweave_ollama.config import OllamaEmbedderConfig, OllamaLLMConfig

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""

if TYPE_CHECKING:
    from memoweave_ollama.embedder import OllamaEmbedder
    from memoweave_ollama.llm import OllamaLLM


def create_llm(config: OllamaLLMConfig) -> OllamaLLM:
    """Factory of the ``ollama`` LLM (imports the client, resolves the host)."""
    from memoweave_ollama.llm import OllamaLLM

    return OllamaLLM.from_config(config)


def create_embedder(config: OllamaEmbedderConfig) -> OllamaEmbedder:
    """Factory of the ``ollama`` embedder (imports the client, resolves the host)."""
    from memoweave_ollama.embedder import OllamaEmbedder

    return OllamaEmbedder.from_config(config)


@hookimpl
def register_llms(register: Register) -> None:
    """Register the ``ollama`` LLM."""
    register(
        "ollama",
        create_llm,
        config_model=OllamaLLMConfig,
        description="Local or remote Ollama chat models (/api/chat; JSON schema, tools, vision)",
    )


@hookimpl
def register_embedders(register: Register) -> None:
    """Register the ``ollama`` embedder."""
    register(
        "ollama",
        create_embedder,
        config_model=OllamaEmbedderConfig,
        description="Ollama embedding models (/api/embed, batched)",
    )
