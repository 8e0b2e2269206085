"""The memoweave conformance kit: standard pytest suites every provider plugin runs.

A plugin's test module subclasses one suite and overrides one fixture::

    from memoweave.plugins import load_registry
    from memoweave.testing import VectorStoreConformance

    class TestMyStore(VectorStoreConformance):
        @pytest.fixture
        def store_factory(self, tmp_path):
            config = {"path": str(tmp_path / "db")}
            return lambda: load_registry().create("vector_store", "mystore", config)

Suites: :class:`VectorStoreConformance` (fixture ``store_factory``),
:class:`GraphStoreConformance` (``graph_factory``), :class:`LLMConformance` (``llm``),
:class:`EmbedderConformance` (``embedder``), :class:`RerankerConformance` (``reranker``);
for providers with native async twins, :class:`AsyncVectorStoreConformance`
(``async_store_factory``), :class:`AsyncLLMConformance` (``async_llm``) and
:class:`AsyncEmbedderConformance` (``async_embedder``).
See ``docs/testing-kit.md``. Requires the ``memoweave[testing]`` extra.

The suites are imported lazily (on first attribute access) so that the ``pytest11`` entry
point, which imports this package in every pytest run, stays cheap; pytest is asked to
rewrite the asserts of every kit module before any of them is imported.
"""

from __future__ import annotations

import importlib
from typing import Any

try:
    import pytest
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("memoweave.testing needs pytest: pip install 'memoweave[testing]'") from exc

from memoweave.testing._rewrite import KIT_MODULES

pytest.register_assert_rewrite(*KIT_MODULES)

_EXPORTS: dict[str, str] = {
    "VectorStoreConformance": "memoweave.testing.vector_store",
    "GraphStoreConformance": "memoweave.testing.graph_store",
    "LLMConformance": "memoweave.testing.llm",
    "EmbedderConformance": "memoweave.testing.embedder",
    "RerankerConformance": "memoweave.testing.reranker",
    "AsyncVectorStoreConformance": "memoweave.testing.async_suites",
    "AsyncLLMConformance": "memoweave.testing.async_suites",
    "AsyncEmbedderConformance": "memoweave.testing.async_suites",
    "Blocking": "memoweave.testing.blocking",
    "StandardTests": "memoweave.testing.guard",
    "create_provider": "memoweave.testing.helpers",
    "free_port": "memoweave.testing.helpers",
    "closed_port_url": "memoweave.testing.helpers",
    "error_server": "memoweave.testing.helpers",
    "cosine": "memoweave.testing.helpers",
    "ERROR_MARKER": "memoweave.testing.helpers",
    "FILTER_CASES": "memoweave.testing.filter_cases",
    "FILTER_CORPUS": "memoweave.testing.filter_cases",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import the kit module that defines ``name`` on first use."""
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'memoweave.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
