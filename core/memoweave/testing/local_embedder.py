"""A real embedder for any test of the session: ``onnx_embedder``.

A session fixture (registered by the kit's pytest plugin, so every test directory sees it)
that loads the ``onnx`` embedder (memoweave-onnx: the packaged int8 all-MiniLM-L6-v2, about
a second to load) ONCE per session and lends it to every test that asks: tests build many
``Memory`` objects, and each closes its providers, so the lent embedder's ``close`` does
nothing; the session closes the real one at the end. Skips when memoweave-onnx is not
installed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from memoweave.providers.embedder import Embedder, Purpose


class SharedEmbedder(Embedder):
    """``inner`` lent to one user among many: ``close`` is a no-op, the rest is ``inner``."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    @property
    def dims(self) -> int | None:
        return self._inner.dims

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        return self._inner.embed(texts, purpose=purpose)


@pytest.fixture(scope="session")
def onnx_embedder() -> Iterator[Embedder]:
    """The session's real ``onnx`` embedder, lent (see the module docstring)."""
    from memoweave.plugins import load_registry

    registry = load_registry()
    if "onnx" not in registry.names("embedder"):
        pytest.skip("needs the onnx embedder plugin (pip install memoweave-onnx)")
    inner = registry.create("embedder", "onnx", {})
    yield SharedEmbedder(inner)
    inner.close()


__all__ = ["SharedEmbedder", "onnx_embedder"]
