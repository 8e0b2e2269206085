"""The plugin: the ``memoweave`` entry point in ``pyproject.toml`` points at this module,
and memoweave calls its ``@hookimpl`` functions with a ``register`` callback.

Registration is cheap: it imports no engine code and does no I/O; the store module is
imported inside the factory, only when a user asks for ``dictstore``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from memoweave import hookimpl
from memoweave_example_dictstore.config import DictStoreConfig

if TYPE_CHECKING:
    from memoweave_example_dictstore.store import DictVectorStore

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


def create_store(config: DictStoreConfig) -> DictVectorStore:
    """The factory memoweave calls with the validated config."""
    from memoweave_example_dictstore.store import DictVectorStore

    return DictVectorStore(config)


@hookimpl
def register_vector_stores(register: Callable[..., None]) -> None:
    """Register ``dictstore``; called once per registry load."""
    register(
        "dictstore",
        create_store,
        config_model=DictStoreConfig,
        description="A vector store in plain Python dicts (exact search, in process memory).",
    )


__all__ = ["MEMOWEAVE_PLUGIN_API", "create_store", "register_vector_stores"]
