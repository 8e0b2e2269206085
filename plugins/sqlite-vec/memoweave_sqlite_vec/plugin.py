"""memoweave plugin: the ``sqlite-vec`` vector store (SQLite + the sqlite-vec extension).

Registration imports neither APSW nor sqlite-vec and does no I/O; both are imported when a
store is created.
"""

from __future__ import annotations

from memoweave.hookspecs import Register, hookimpl
from memoweave.providers.vector_store import VectorStore
from memoweave_sqlite_vec.config import SqliteVecStoreConfig

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


def create_store(config: SqliteVecStoreConfig) -> VectorStore:
    """Build a :class:`memoweave_sqlite_vec.store.SqliteVecStore` from a validated config."""
    from memoweave_sqlite_vec.store import SqliteVecStore

    return SqliteVecStore(config)


@hookimpl
def register_vector_stores(register: Register) -> None:
    """Register the ``sqlite-vec`` vector store."""
    register(
        "sqlite-vec",
        create_store,
        config_model=SqliteVecStoreConfig,
        description="SQLite + sqlite-vec: one file that several processes share (WAL)",
    )
