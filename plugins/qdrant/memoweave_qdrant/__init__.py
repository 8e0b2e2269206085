"""memoweave plugin: the ``qdrant`` vector store (Qdrant Edge, qdrant-client local, server).

- :mod:`.plugin`: the entry point (the ``@hookimpl`` functions and the factories);
- :mod:`.config`: the configuration models.
"""

from memoweave_qdrant.config import QdrantStoreConfig

__version__ = "0.1.0"

__all__ = ["QdrantStoreConfig", "__version__"]
