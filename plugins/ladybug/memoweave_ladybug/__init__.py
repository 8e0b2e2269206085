"""memoweave graph store plugin: LadybugDB embedded (provider name ``ladybug``).

- :mod:`.plugin`: the entry point (the ``@hookimpl`` functions and the factories);
- :mod:`.config`: the configuration models;
- :mod:`.graph_store`: ``LadybugGraphStore``, the provider (imported only when used).
"""

from memoweave_ladybug.config import LadybugConfig

__version__ = "0.1.0"

__all__ = ["LadybugConfig", "__version__"]
