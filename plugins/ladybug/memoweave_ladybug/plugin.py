"""memoweave graph store plugin: LadybugDB embedded (provider name ``ladybug``).

Registration imports nothing from LadybugDB and does no I/O; the engine is imported and
the database opened by the factory, when a user asks for ``graph_store: ladybug``.
"""

from __future__ import annotations

from memoweave.hookspecs import Register, hookimpl
from memoweave.providers.graph_store import GraphStore
from memoweave_ladybug.config import LadybugConfig

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


def create_store(config: LadybugConfig) -> GraphStore:
    """Open a :class:`memoweave_ladybug.graph_store.LadybugGraphStore` (imports the engine)."""
    from memoweave_ladybug.graph_store import LadybugGraphStore

    return LadybugGraphStore(config)


@hookimpl
def register_graph_stores(register: Register) -> None:
    """Register the ``ladybug`` graph store."""
    register(
        "ladybug",
        create_store,
        config_model=LadybugConfig,
        description="Embedded graph store on LadybugDB (Kuzu fork): one file, Cypher, no server.",
    )
