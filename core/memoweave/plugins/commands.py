"""Calling the ``register_commands`` hook: plugins adding commands to the CLI.

Each plugin's implementation is called on its own with the CLI's click group, and the
commands it added are recorded with its distribution (``memoweave plugins`` lists them).
A plugin whose hook raises, or that adds a command whose name the CLI already has, is
skipped as a whole (its commands removed, earlier ones restored) and recorded as a
:class:`~memoweave.plugins.host.PluginLoadFailure`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pluggy

from memoweave.hookspecs import COMMAND_HOOK
from memoweave.plugins.host import PluginLoadFailure, one_line
from memoweave.plugins.registration import plugin_distribution


@dataclass(frozen=True)
class CommandInfo:
    """One CLI command a plugin added."""

    name: str
    distribution: str
    version: str | None
    plugin: str


def add_plugin_commands(
    pm: pluggy.PluginManager, group: Any
) -> tuple[list[CommandInfo], list[PluginLoadFailure]]:
    """Let every plugin of ``pm`` add commands to the click ``group``.

    Returns:
        The commands added, in plugin registration order, and one failure per plugin that
        was skipped.
    """
    added: list[CommandInfo] = []
    failures: list[PluginLoadFailure] = []
    for impl in getattr(pm.hook, COMMAND_HOOK).get_hookimpls():
        dist = plugin_distribution(pm, impl.plugin_name)
        before = dict(group.commands)
        try:
            if impl.hookwrapper or impl.wrapper:
                raise TypeError(f"{COMMAND_HOOK} must be a plain hookimpl, not a wrapper")
            impl.function(**dict.fromkeys(impl.argnames, group))
            taken = sorted(n for n, cmd in group.commands.items() if before.get(n, cmd) is not cmd)
            if taken:
                raise ValueError(f"command name already used by the CLI: {', '.join(taken)}")
        except Exception as exc:  # a broken plugin must not break the CLI
            group.commands.clear()
            group.commands.update(before)
            failures.append(
                PluginLoadFailure(impl.plugin_name, dist.name, dist.version, one_line(exc))
            )
            continue
        added.extend(
            CommandInfo(name, dist.name, dist.version, impl.plugin_name)
            for name in group.commands
            if name not in before
        )
    return added, failures
