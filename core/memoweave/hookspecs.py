"""Plugin hook specifications (project name ``memoweave``).

A plugin is a module (or object) with functions decorated by :data:`hookimpl`. Each hook
receives a ``register`` callback and calls it once per provider:

    register(name, factory, *, config_model, description="")

- ``name``: the provider name users write in configuration (``"qdrant"``), lowercase,
  ``[a-z0-9][a-z0-9_-]*``.
- ``factory``: a callable taking one validated ``config_model`` instance and returning the
  provider object. It is called only when the user asks for that provider.
- ``config_model``: a pydantic model (``extra="forbid"`` recommended) that validates the
  provider's ``config`` mapping; its JSON schema is shown by ``memoweave plugins``.
- ``description``: one line for listings.

Registration must do no I/O and import no vendor SDK: import the SDK inside the factory
or inside the provider's methods. Hooks are called with keyword arguments, so an
implementation may accept a subset of the arguments below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

PROJECT_NAME = "memoweave"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

Register = Callable[..., None]


@hookspec
def register_llms(register: Register) -> None:
    """Register LLM providers (objects implementing :class:`memoweave.providers.llm.LLM`)."""


@hookspec
def register_embedders(register: Register) -> None:
    """Register embedders (objects implementing :class:`memoweave.providers.embedder.Embedder`)."""


@hookspec
def register_vector_stores(register: Register) -> None:
    """Register vector stores (implementing :class:`memoweave.providers.VectorStore`)."""


@hookspec
def register_rerankers(register: Register) -> None:
    """Register rerankers (objects implementing :class:`memoweave.providers.reranker.Reranker`)."""


@hookspec
def register_graph_stores(register: Register) -> None:
    """Register graph stores (implementing :class:`memoweave.providers.GraphStore`)."""


@hookspec
def register_commands(cli: Any) -> None:
    """Add commands to the ``memoweave`` CLI; ``cli`` is its click group.

    Decorate functions with ``@cli.command()`` (or call ``cli.add_command``). Like provider
    registration this does no I/O and imports no heavy dependency: import it inside the
    command's callback. A name the CLI already has is refused (the plugin's commands are
    skipped and reported by ``memoweave plugins``).
    """


@hookspec
def register_mem0_sources(register: Register) -> None:
    """Register readers of a mem0 vector store, for ``memoweave import --from-mem0``.

    ``register(name, factory)``: ``name`` is mem0's provider name (``"qdrant"``,
    ``"milvus"``, ``"upstash_vector"``); ``factory(config)`` takes mem0's ``config`` mapping
    of that provider and returns a :class:`memoweave.transfer.mem0.Mem0Source`. No I/O at
    registration; import the SDK inside the factory.
    """


COMMAND_HOOK = "register_commands"
MEM0_SOURCE_HOOK = "register_mem0_sources"

HOOK_KINDS: dict[str, str] = {
    "register_llms": "llm",
    "register_embedders": "embedder",
    "register_vector_stores": "vector_store",
    "register_rerankers": "reranker",
    "register_graph_stores": "graph_store",
}
