"""Hook implementations: registers the embedder and the reranker (imports nothing heavy)."""

from __future__ import annotations

from memoweave.hookspecs import Register, hookimpl
from memoweave.providers.embedder import Embedder
from memoweave.providers.reranker import Reranker
from memoweave_sentence_transformers.config import CrossEncoderConfig, SentenceTransformerConfig

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


def _make_embedder(config: SentenceTransformerConfig) -> Embedder:
    from memoweave_sentence_transformers.embedder import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(config)


def _make_cross_encoder(config: CrossEncoderConfig) -> Reranker:
    from memoweave_sentence_transformers.cross_encoder import CrossEncoderReranker

    return CrossEncoderReranker(config)


@hookimpl
def register_embedders(register: Register) -> None:
    register(
        "sentence-transformers",
        _make_embedder,
        config_model=SentenceTransformerConfig,
        description="Local sentence-transformers model (default: all-MiniLM-L6-v2), offline.",
    )


@hookimpl
def register_rerankers(register: Register) -> None:
    register(
        "cross-encoder",
        _make_cross_encoder,
        config_model=CrossEncoderConfig,
        description="Local sentence-transformers CrossEncoder model, offline.",
    )
