"""memoweave-example-dictstore: the ``dictstore`` vector store for memoweave.

- :mod:`.plugin`: the entry point (registers ``dictstore``);
- :mod:`.config`: :class:`DictStoreConfig`, its configuration;
- :mod:`.store`: ``DictVectorStore``, the provider (imported only when used).
"""

from memoweave_example_dictstore.config import DictStoreConfig

__version__ = "0.1.0"

__all__ = ["DictStoreConfig", "__version__"]
