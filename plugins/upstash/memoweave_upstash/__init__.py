"""memoweave-upstash: the ``upstash`` vector store (Upstash Vector over REST).

- :mod:`.plugin`: the entry point (the ``@hookimpl`` functions and the factories);
- :mod:`.config`: the configuration models.
"""

from memoweave_upstash.config import UpstashStoreConfig

__version__ = "0.1.0"

__all__ = ["UpstashStoreConfig", "__version__"]
