"""Plugin host and provider registry.

``load_registry()`` builds a fresh plugin manager (entry points of group ``memoweave``,
then the core's built-ins) and returns the :class:`ProviderRegistry` of everything they
register. See :mod:`memoweave.plugins.host` for the environment variables.
"""

from __future__ import annotations

from collections.abc import Iterable

from memoweave.plugins.host import (
    ALLOWLIST_ENV,
    DISABLE_AUTOLOAD_ENV,
    ENTRY_POINT_GROUP,
    PluginLoadFailure,
    PluginLoadWarning,
    get_plugin_manager,
)
from memoweave.plugins.registration import KINDS, ProviderInfo
from memoweave.plugins.registry import ProviderConflict, ProviderRegistry


def load_registry(
    *, autoload: bool | None = None, allow: Iterable[str] | None = None
) -> ProviderRegistry:
    """Load the plugins (see :func:`get_plugin_manager`) and collect their providers."""
    return ProviderRegistry.from_plugin_manager(get_plugin_manager(autoload=autoload, allow=allow))


__all__ = [
    "ALLOWLIST_ENV",
    "DISABLE_AUTOLOAD_ENV",
    "ENTRY_POINT_GROUP",
    "KINDS",
    "PluginLoadFailure",
    "PluginLoadWarning",
    "ProviderConflict",
    "ProviderInfo",
    "ProviderRegistry",
    "get_plugin_manager",
    "load_registry",
]
