"""memoweave-ollama: LLM and embedder for Ollama, through the official ``ollama`` client.

- :mod:`.plugin`: the entry point (the ``@hookimpl`` functions and the factories);
- :mod:`.config`: the configuration models.
"""

from memoweave_ollama.config import OllamaEmbedderConfig, OllamaLLMConfig

__version__ = "0.1.0"

__all__ = ["OllamaEmbedderConfig", "OllamaLLMConfig", "__version__"]
