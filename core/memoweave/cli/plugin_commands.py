"""The ``memoweave`` group: built-in commands plus those plugins add (``register_commands``).

Built-in commands are given as ``module:attribute`` names and imported on first use, so
running one command imports only its module. Plugin commands are loaded once per
invocation, the first time the group lists or looks up a command it does not have, so
``memoweave --help`` shows them and ``pip install memoweave-server`` makes ``memoweave
serve`` appear. A plugin that fails is skipped with a
:class:`PluginLoadWarning` and listed by ``memoweave plugins``.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from typing import Any

import click

from memoweave.cli.errors import MemoweaveGroup
from memoweave.plugins.commands import CommandInfo, add_plugin_commands
from memoweave.plugins.host import PluginLoadFailure, PluginLoadWarning, get_plugin_manager


class PluginCommandGroup(MemoweaveGroup):
    """A :class:`MemoweaveGroup` that also offers the commands of installed plugins."""

    def __init__(
        self, *args: object, builtin_commands: Mapping[str, str] | None = None, **kwargs: object
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]  # click's own, passed on
        self._builtins = dict(builtin_commands or {})
        self._plugin_commands: list[CommandInfo] | None = None
        self.command_failures: list[PluginLoadFailure] = []

    def _builtin(self, name: str) -> click.Command | None:
        """The built-in command ``name``, imported and added on first use."""
        if name not in self.commands and name in self._builtins:
            module, _, attribute = self._builtins[name].partition(":")
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return self.commands.get(name)

    @property
    def plugin_commands(self) -> list[CommandInfo]:
        """The commands plugins added (loads them on first use, after every built-in, so
        a plugin command can never take a built-in's name)."""
        if self._plugin_commands is None:
            self._plugin_commands = []  # set first: a plugin's hook may list commands
            for name in self._builtins:
                self._builtin(name)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PluginLoadWarning)  # provider-side, shown elsewhere
                pm = get_plugin_manager()
            added, failed = add_plugin_commands(pm, self)
            self._plugin_commands = added
            self.command_failures = failed
            for failure in failed:
                warnings.warn(
                    f"memoweave plugin commands skipped: {failure.describe()}",
                    PluginLoadWarning,
                    stacklevel=2,
                )
        return self._plugin_commands

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Run the CLI; plugin commands are (re)loaded for this invocation's environment."""
        for info in self._plugin_commands or []:
            self.commands.pop(info.name, None)
        self._plugin_commands = None
        self.command_failures = []
        return super().main(*args, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self.plugin_commands  # noqa: B018 - loads them
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if self._builtin(cmd_name) is None:
            self.plugin_commands  # noqa: B018 - loads them
        return super().get_command(ctx, cmd_name)
