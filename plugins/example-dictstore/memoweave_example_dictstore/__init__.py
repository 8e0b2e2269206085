"""memoweave-example-dictstore: registers the ``dictstore`` vector store.

This module is the plugin: the ``memoweave`` entry point in ``pyproject.toml`` points here,
and memoweave calls the ``@hookimpl`` functions below with a ``register`` callback.
Registration is cheap: it imports no engine code and does no I/O; the store module is
imported inside the factory, only when a user asks for ``dictstore``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from memoweave import hookimpl

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""

if TYPE_CHECKING:
    from memoweave_example_dictstore.store import DictVectorStore

__version__ = "0.1.0"


class DictStoreConfig(BaseModel):
    """``config`` of vector_store ``dictstore`` (unknown keys are rejected)."""

    model_config = ConfigDict(extra="forbid")

    max_records: int | None = Field(
        default=None, ge=1, description="Refuse upserts that would grow a collection past this."
    )


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
        description="Example: exact search over plain Python dicts, in process memory.",
    )


__all__ = ["DictStoreConfig", "__version__", "create_store", "register_vector_stores"]
