"""The ``memoweave`` group: built-in commands plus those plugins add (``register_commands``).

Plugin commands are loaded once per invocation, the first time the group lists or looks
up a command, so ``memoweave --help`` shows them and ``pip install memoweave-server`` makes
``memoweave serve`` appear. A plugin that fails is skipped with a
:class:`PluginLoadWarning` and listed by ``memoweave plugins``.
"""

from __future__ import annotations

import warnings
from typing import Any

import click

from memoweave.cli.errors import MemoweaveGroup
from memoweave.plugins.commands import CommandInfo, add_plugin_commands
from memoweave.plugins.host import PluginLoadFailure, PluginLoadWarning, get_plugin_manager


class PluginCommandGroup(MemoweaveGroup):
    """A :class:`MemoweaveGroup` that also offers the commands of installed plugins."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]  # click's own, passed on
        self._plugin_commands: list[CommandInfo] | None = None
        self.command_failures: list[PluginLoadFailure] = []

    @property
    def plugin_commands(self) -> list[CommandInfo]:
        """The commands plugins added (loads them on first use)."""
        if self._plugin_commands is None:
            self._plugin_commands = []  # set first: a plugin's hook may list commands
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
        if cmd_name not in self.commands:
            self.plugin_commands  # noqa: B018 - loads them
        return super().get_command(ctx, cmd_name)
