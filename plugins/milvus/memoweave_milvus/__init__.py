"""memoweave plugin: the ``milvus`` vector store (embedded Milvus Lite or a Milvus server).

- :mod:`.plugin`: the entry point (the ``@hookimpl`` functions and the factories);
- :mod:`.config`: the configuration models.
"""

from memoweave_milvus.config import MilvusStoreConfig

__version__ = "0.1.0"

__all__ = ["MilvusStoreConfig", "__version__"]
