"""The standard embedder and reranker suites on the real packaged models (built through the
registry): int8 all-MiniLM-L6-v2, int8 ms-marco-MiniLM-L-12-v2 and int8
answerai-colbert-small-v1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memoweave.plugins import load_registry
from memoweave.providers.embedder import Embedder
from memoweave.providers.reranker import Reranker
from memoweave.testing import EmbedderConformance, RerankerConformance


class TestOnnxEmbedderConformance(EmbedderConformance):
    semantic = True

    @pytest.fixture(scope="class")
    @classmethod
    def embedder(cls) -> Iterator[Embedder]:
        provider = load_registry().create("embedder", "onnx", {})
        yield provider
        provider.close()


class TestOnnxCrossEncoderConformance(RerankerConformance):
    semantic = True

    @pytest.fixture(scope="class")
    @classmethod
    def reranker(cls) -> Iterator[Reranker]:
        provider = load_registry().create("reranker", "onnx", {})
        yield provider
        provider.close()


class TestOnnxLateInteractionConformance(RerankerConformance):
    semantic = True

    @pytest.fixture(scope="class")
    @classmethod
    def reranker(cls) -> Iterator[Reranker]:
        provider = load_registry().create("reranker", "onnx-colbert", {})
        yield provider
        provider.close()
