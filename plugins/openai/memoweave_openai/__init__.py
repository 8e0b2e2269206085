"""memoweave-openai: LLM and embedder for OpenAI and OpenAI-compatible servers.

- :mod:`.plugin`: the entry point (the ``@hookimpl`` functions and the factories);
- :mod:`.config`: the configuration models.
"""

from memoweave_openai.config import OpenAIEmbedderConfig, OpenAILLMConfig

__version__ = "0.1.0"

__all__ = ["OpenAIEmbedderConfig", "OpenAILLMConfig", "__version__"]
