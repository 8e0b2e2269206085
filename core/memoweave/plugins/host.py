"""The plugin host: a pluggy manager with memoweave's specs, entry points and built-ins.

:func:`get_plugin_manager` builds a fresh manager on every call (there is no module-level
singleton). Loading order:

1. the hook specifications of :mod:`memoweave.hookspecs`;
2. entry points of group ``memoweave`` (one plugin per entry point, registered under the
   entry point's name), unless autoload is off;
3. the core's built-in providers (:data:`BUILTIN_PLUGINS`), registered as ordinary plugins;
4. ``check_pending()``: a plugin implementing a hook that no spec declares is rejected.

Environment:

- ``MEMOWEAVE_DISABLE_PLUGIN_AUTOLOAD=1`` turns step 2 off (built-ins still load);
- ``MEMOWEAVE_PLUGINS=a,b`` loads only the entry points whose entry-point name or
  distribution name is listed (set but empty: load none).

A plugin that fails to import, or whose hooks fail pluggy's validation, never breaks the
host: it is unregistered, recorded as a :class:`PluginLoadFailure` (with its distribution
name and version) in ``manager.load_failures``, and reported with a
:class:`PluginLoadWarning`. Loading does no I/O beyond importing the plugin modules.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import pluggy

from memoweave import hookspecs
from memoweave.distributions import name_and_version

ENTRY_POINT_GROUP = "memoweave"
DISABLE_AUTOLOAD_ENV = "MEMOWEAVE_DISABLE_PLUGIN_AUTOLOAD"
ALLOWLIST_ENV = "MEMOWEAVE_PLUGINS"
BUILTIN_DISTRIBUTION = "memoweave"
BUILTIN_PLUGINS: tuple[str, ...] = ("memoweave.plugins.builtins",)
"""Modules holding the core's own providers; they travel the same road as third-party ones."""

_TRUE = frozenset({"1", "true", "yes", "on"})
PLUGIN_API = 1
"""The plugin API this core speaks. A plugin declares the one it was built for as a
module attribute ``MEMOWEAVE_PLUGIN_API`` of its entry point (absent: 1); another value
skips the plugin, reported as a load failure (``memoweave plugins``), never a crash."""
API_ATTRIBUTE = "MEMOWEAVE_PLUGIN_API"


class PluginLoadWarning(UserWarning):
    """Emitted once per plugin that could not be loaded or registered."""


@dataclass(frozen=True)
class DistributionRef:
    """The installed distribution a plugin came from."""

    name: str
    version: str | None

    def __str__(self) -> str:
        return f"{self.name} {self.version}" if self.version else self.name


@dataclass(frozen=True)
class PluginLoadFailure:
    """A plugin that was skipped, with the distribution to blame and a one-line reason."""

    plugin: str
    distribution: str
    version: str | None
    error: str

    def describe(self) -> str:
        """One line: ``memoweave-foo 1.0 (plugin 'foo'): ImportError: ...``."""
        dist = f"{self.distribution} {self.version}" if self.version else self.distribution
        return f"{dist} (plugin {self.plugin!r}): {self.error}"


def builtin_distribution() -> DistributionRef:
    """The core's own distribution, owner of the built-in providers."""
    try:
        dist = importlib.metadata.distribution(BUILTIN_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        from memoweave import __version__

        return DistributionRef(BUILTIN_DISTRIBUTION, __version__)
    return distribution_ref(dist, BUILTIN_DISTRIBUTION)


def distribution_ref(
    dist: importlib.metadata.Distribution, fallback: str | None = None
) -> DistributionRef:
    """``dist``'s ``Name`` (else ``fallback``, else ``dist.name``) and ``Version``, read
    from its metadata's header block alone (:mod:`memoweave.distributions`)."""
    found = name_and_version(dist)
    name = found.get("Name") or (fallback if fallback is not None else dist.name)
    return DistributionRef(name, found.get("Version"))


def one_line(exc: BaseException) -> str:
    """``"TypeName: message"`` with all whitespace runs collapsed to single spaces."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def normalize_distribution_name(name: str) -> str:
    """PEP 503 normalisation, so ``Memoweave_Foo`` matches ``memoweave-foo``."""
    return re.sub(r"[-_.]+", "-", name).lower()


class MemoweavePluginManager(pluggy.PluginManager):
    """A pluggy manager that remembers each plugin's distribution and the load failures."""

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT_NAME)
        self.add_hookspecs(hookspecs)
        self.load_failures: list[PluginLoadFailure] = []
        self._distributions: dict[str, DistributionRef] = {}

    def distribution_of(self, plugin_name: str) -> DistributionRef | None:
        """The distribution that provided the plugin registered as ``plugin_name``."""
        return self._distributions.get(plugin_name)

    def record_failure(self, plugin_name: str, dist: DistributionRef, error: str) -> None:
        """Record a skipped plugin and warn about it."""
        failure = PluginLoadFailure(plugin_name, dist.name, dist.version, error)
        self.load_failures.append(failure)
        warnings.warn(
            f"memoweave plugin skipped: {failure.describe()}", PluginLoadWarning, stacklevel=3
        )

    def add_plugin(self, plugin: object, name: str, dist: DistributionRef) -> bool:
        """Register ``plugin`` from ``dist``; on a validation error record it and return False."""
        if self.has_plugin(name):
            owner = self.distribution_of(name)
            self.record_failure(name, dist, f"plugin name {name!r} is already used by {owner}")
            return False
        try:
            self.register(plugin, name=name)
        except (pluggy.PluginValidationError, ValueError) as exc:
            if self.has_plugin(name):  # pluggy < 1.6 could register part of a plugin
                self.unregister(name=name)
            self.record_failure(name, dist, one_line(exc))
            return False
        self._distributions[name] = dist
        return True

    def check_pending_plugins(self) -> None:
        """Unregister (and record) every plugin implementing a hook no spec declares."""
        while True:
            try:
                self.check_pending()
            except pluggy.PluginValidationError as exc:
                name = self.get_name(exc.plugin) or repr(exc.plugin)
                unknown = sorted(
                    caller.name
                    for caller in self.get_hookcallers(exc.plugin) or []
                    if not caller.has_spec()
                )
                dist = self._distributions.pop(name, DistributionRef(name, None))
                self.unregister(exc.plugin)
                known = ", ".join(
                    [*hookspecs.HOOK_KINDS, hookspecs.COMMAND_HOOK, hookspecs.MEM0_SOURCE_HOOK]
                )
                self.record_failure(
                    name, dist, f"unknown hook {', '.join(unknown)} (memoweave hooks: {known})"
                )
            else:
                return


def _env_allowlist() -> list[str] | None:
    raw = os.environ.get(ALLOWLIST_ENV)
    if raw is None:
        return None
    return [part.strip() for part in raw.split(",") if part.strip()]


def _load_entry_points(pm: MemoweavePluginManager, allow: list[str] | None) -> None:
    wanted = None if allow is None else {normalize_distribution_name(a) for a in allow}
    matched: set[str] = set()
    # entry_points() reads only entry_points.txt files and keeps the first distribution of
    # each name on sys.path, as imports do.
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist
        if dist is not None:
            ref = distribution_ref(dist)
        else:
            ref = DistributionRef(ep.value.split(":")[0], None)
        if wanted is not None:
            hits = wanted & {
                normalize_distribution_name(ref.name),
                normalize_distribution_name(ep.name),
            }
            if not hits:
                continue
            matched |= hits
        try:
            plugin = ep.load()
        except Exception as exc:  # a broken plugin must not break the host
            pm.record_failure(ep.name, ref, one_line(exc))
            continue
        mismatch = api_mismatch(plugin)
        if mismatch is not None:
            pm.record_failure(ep.name, ref, mismatch)
            continue
        pm.add_plugin(plugin, ep.name, ref)
    for name in sorted((wanted or set()) - matched):
        pm.record_failure(
            name,
            DistributionRef(name, None),
            "listed in the plugin allowlist but no installed plugin has that entry-point "
            "or distribution name",
        )


def api_mismatch(plugin: object) -> str | None:
    """Why ``plugin`` cannot be used with this core's plugin API, or ``None``."""
    declared = getattr(plugin, API_ATTRIBUTE, PLUGIN_API)
    if declared == PLUGIN_API and isinstance(declared, int):
        return None
    from memoweave import __version__

    return (
        f"built for memoweave plugin API {declared!r}, but memoweave {__version__} speaks "
        f"API {PLUGIN_API}: install a release of the plugin made for this memoweave"
    )


def _load_builtins(pm: MemoweavePluginManager) -> None:
    ref = builtin_distribution()
    for module_name in BUILTIN_PLUGINS:
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            pm.record_failure(module_name, ref, one_line(exc))
            continue
        pm.add_plugin(module, module_name, ref)


def get_plugin_manager(
    *, autoload: bool | None = None, allow: Iterable[str] | None = None
) -> pluggy.PluginManager:
    """Build a fresh plugin manager (see the module docstring for the loading rules).

    Args:
        autoload: load entry points of group ``memoweave``; ``None`` reads
            ``MEMOWEAVE_DISABLE_PLUGIN_AUTOLOAD``.
        allow: entry-point or distribution names to load (an iterable, or one
            comma-separated string); ``None`` reads ``MEMOWEAVE_PLUGINS`` (unset: load all).

    Returns:
        A :class:`MemoweavePluginManager`; its ``load_failures`` lists skipped plugins.
    """
    if autoload is None:
        autoload = os.environ.get(DISABLE_AUTOLOAD_ENV, "").strip().lower() not in _TRUE
    if isinstance(allow, str):
        allow = allow.split(",")
    allowlist = _env_allowlist() if allow is None else [a.strip() for a in allow if a.strip()]
    pm = MemoweavePluginManager()
    if autoload:
        _load_entry_points(pm, allowlist)
    _load_builtins(pm)
    pm.check_pending_plugins()
    return pm
