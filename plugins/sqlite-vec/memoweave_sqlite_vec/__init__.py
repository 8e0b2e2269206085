"""memoweave plugin: the ``sqlite-vec`` vector store (SQLite + the sqlite-vec extension).

- :mod:`.plugin`: the entry point (the ``@hookimpl`` functions and the factories);
- :mod:`.config`: the configuration models.
"""

from memoweave_sqlite_vec.config import SqliteVecStoreConfig

__version__ = "0.1.0"

__all__ = ["SqliteVecStoreConfig", "__version__"]
