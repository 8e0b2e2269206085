"""The embedded default stack: what ``Memory()`` uses when nothing is configured.

Everything lives under the memoweave home (``$MEMOWEAVE_HOME``, else ``~/.memoweave``):
the vector store's files, the SQLite history. The embedder runs in-process. No network.
"""

from __future__ import annotations

import os
from pathlib import Path

from memoweave.config.models import ProviderSpec
from memoweave.errors import ProviderNotFound

DEFAULT_EMBEDDER = "onnx"
DEFAULT_VECTOR_STORE = "qdrant"
EMBEDDED_PIP = 'pip install "memoweave[embedded]"'
"""Installs the default stack: the core with memoweave-qdrant and memoweave-onnx."""
EMBEDDED_SOURCE_PIP = "pip install . ./plugins/qdrant ./plugins/onnx"
"""The same from a source checkout (run at its root)."""


def memoweave_home() -> Path:
    """``$MEMOWEAVE_HOME`` or ``~/.memoweave``."""
    return Path(os.environ.get("MEMOWEAVE_HOME") or Path.home() / ".memoweave").expanduser()


def default_vector_store() -> ProviderSpec:
    """The embedded vector store (chosen by ``bench/store_scale.py``; see bench/README.md)."""
    return ProviderSpec(
        provider=DEFAULT_VECTOR_STORE,
        config={"mode": "edge", "path": str(memoweave_home() / "qdrant-edge")},
    )


def default_embedder() -> ProviderSpec:
    """The in-process all-MiniLM-L6-v2 (int8 ONNX) embedder."""
    return ProviderSpec(provider=DEFAULT_EMBEDDER)


def default_history_path() -> Path:
    """Where the SQLite history lives by default."""
    return memoweave_home() / "history.db"


def default_stack_missing(exc: ProviderNotFound) -> ProviderNotFound:
    """The error when a provider of the embedded default stack is not installed: it names
    the one command that installs the whole stack."""
    return ProviderNotFound(
        f"{exc.message}; the embedded default (Memory() with no vector_store or embedder "
        f"configured) needs the {DEFAULT_VECTOR_STORE} and {DEFAULT_EMBEDDER} plugins",
        hint=f"{EMBEDDED_PIP} (from a source checkout: {EMBEDDED_SOURCE_PIP}), or "
        "configure the providers you have installed (`memoweave plugins` lists them).",
        details=exc.details,
    )
