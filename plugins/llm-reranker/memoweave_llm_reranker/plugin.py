"""Hook implementation: registers the ``llm`` reranker (imports nothing heavy)."""

from __future__ import annotations

from memoweave.hookspecs import Register, hookimpl
from memoweave.providers.reranker import Reranker
from memoweave_llm_reranker.config import LLMRerankerConfig

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


def _make_reranker(config: LLMRerankerConfig) -> Reranker:
    """Create the configured LLM through the registry, then the reranker that owns it."""
    from memoweave.plugins import load_registry
    from memoweave_llm_reranker.reranker import LLMReranker

    llm = load_registry().create("llm", config.llm.provider, config.llm.config)
    return LLMReranker(llm, config, owns_llm=True)


@hookimpl
def register_rerankers(register: Register) -> None:
    register(
        "llm",
        _make_reranker,
        config_model=LLMRerankerConfig,
        description="Any configured LLM scores all candidates in one call (JSON 0-10 scores).",
    )
