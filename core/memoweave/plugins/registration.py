"""Calling the ``register_*`` hooks and validating what each plugin registers.

Each plugin's hooks are called one implementation at a time with a ``register`` callback
bound to that plugin, so every :class:`ProviderInfo` knows its distribution. A plugin whose
hook raises (including the :class:`PluginError` that ``register`` raises for an invalid
registration) is skipped as a whole: none of its providers are kept, and the problem is
recorded as a :class:`PluginLoadFailure` naming its distribution.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pluggy
from pydantic import BaseModel

from memoweave.errors import PluginError
from memoweave.hookspecs import HOOK_KINDS
from memoweave.plugins.host import DistributionRef, MemoweavePluginManager, one_line

NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]*")
KINDS: tuple[str, ...] = tuple(HOOK_KINDS.values())
"""Provider kinds, in display order: llm, embedder, vector_store, reranker, graph_store."""


@dataclass(frozen=True)
class ProviderInfo:
    """One registered provider and where it came from."""

    kind: str
    name: str
    factory: Callable[[Any], Any]
    config_model: type[BaseModel]
    description: str
    distribution: str
    version: str | None
    plugin: str

    def config_schema(self) -> dict[str, Any]:
        """The JSON schema of the provider's ``config`` mapping."""
        return self.config_model.model_json_schema()

    @property
    def source(self) -> str:
        """``"<distribution> <version>"`` for messages."""
        return str(DistributionRef(self.distribution, self.version))


def plugin_distribution(pm: pluggy.PluginManager, plugin_name: str) -> DistributionRef:
    """The distribution that provided the plugin registered as ``plugin_name``."""
    if isinstance(pm, MemoweavePluginManager):
        found = pm.distribution_of(plugin_name)
        if found is not None:
            return found
    plugin = pm.get_plugin(plugin_name)
    for candidate, dist in pm.list_plugin_distinfo():
        if candidate is plugin:
            return DistributionRef(dist.project_name, dist.version)
    return DistributionRef(plugin_name, None)


def _make_register(
    kind: str, plugin: str, dist: DistributionRef, staged: list[ProviderInfo]
) -> Callable[..., None]:
    def register(
        name: str,
        factory: Callable[[Any], Any],
        *,
        config_model: type[BaseModel],
        description: str = "",
    ) -> None:
        def invalid(reason: str) -> PluginError:
            return PluginError(
                f"{dist} (plugin {plugin!r}) registered an invalid {kind} provider "
                f"{name!r}: {reason}",
                details={
                    "distribution": dist.name,
                    "plugin": plugin,
                    "kind": kind,
                    "reason": f"invalid {kind} provider {name!r}: {reason}",
                },
            )

        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise invalid(f"the name must match {NAME_PATTERN.pattern}")
        if not callable(factory):
            raise invalid(f"the factory must be callable, got {type(factory).__name__}")
        if not (isinstance(config_model, type) and issubclass(config_model, BaseModel)):
            raise invalid("config_model must be a pydantic BaseModel subclass")
        if not isinstance(description, str):
            raise invalid("the description must be a string")
        if any(p.kind == kind and p.name == name for p in staged):
            raise invalid("the same name is registered twice")
        first_line = description.strip().splitlines()[0] if description.strip() else ""
        staged.append(
            ProviderInfo(
                kind, name, factory, config_model, first_line, dist.name, dist.version, plugin
            )
        )

    return register


def collect_providers(
    pm: pluggy.PluginManager,
) -> tuple[list[ProviderInfo], list[tuple[str, DistributionRef, str]]]:
    """Call every plugin's ``register_*`` hooks.

    Returns:
        The providers of the plugins that registered cleanly, in plugin registration order,
        and ``(plugin, distribution, error)`` for each plugin that did not.
    """
    providers: list[ProviderInfo] = []
    failures: list[tuple[str, DistributionRef, str]] = []
    for plugin_name, plugin in pm.list_name_plugin():
        if plugin is None:  # blocked
            continue
        dist = plugin_distribution(pm, plugin_name)
        staged: list[ProviderInfo] = []
        try:
            for hook_name, kind in HOOK_KINDS.items():
                for impl in getattr(pm.hook, hook_name).get_hookimpls():
                    if impl.plugin_name != plugin_name:
                        continue
                    if impl.hookwrapper or impl.wrapper:
                        raise PluginError(f"{hook_name} must be a plain hookimpl, not a wrapper")
                    register = _make_register(kind, plugin_name, dist, staged)
                    impl.function(**dict.fromkeys(impl.argnames, register))
        except PluginError as exc:
            failures.append((plugin_name, dist, exc.details.get("reason", exc.message)))
        except Exception as exc:  # a broken plugin must not break the registry
            failures.append((plugin_name, dist, one_line(exc)))
        else:
            providers.extend(staged)
    return providers, failures
