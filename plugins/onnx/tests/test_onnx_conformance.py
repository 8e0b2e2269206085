"""The standard embedder suite on the real int8 all-MiniLM-L6-v2 (built through the registry)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memoweave.plugins import load_registry
from memoweave.providers.embedder import Embedder
from memoweave.testing import EmbedderConformance


class TestOnnxEmbedderConformance(EmbedderConformance):
    semantic = True

    @pytest.fixture(scope="class")
    @classmethod
    def embedder(cls) -> Iterator[Embedder]:
        provider = load_registry().create("embedder", "onnx", {})
        yield provider
        provider.close()
