"""The embedded default stack: what ``Memory()`` uses when nothing is configured.

Everything lives under the memoweave home (``$MEMOWEAVE_HOME``, else ``~/.memoweave``):
the vector store's files, the SQLite history. The embedder runs in-process. No network.
"""

from __future__ import annotations

import os
from pathlib import Path

from memoweave.config.models import ProviderSpec

DEFAULT_EMBEDDER = "onnx"
DEFAULT_VECTOR_STORE = "qdrant"


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
