"""``memoweave plugins``: the installed providers, the commands plugins add, load failures
and name conflicts."""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from memoweave import scaffold
from memoweave.cli.plugin_commands import PluginCommandGroup
from memoweave.cli.render import make_console
from memoweave.plugins import KINDS, PluginLoadWarning, ProviderRegistry, load_registry
from memoweave.plugins.commands import CommandInfo
from memoweave.plugins.host import PluginLoadFailure


def registry_to_json(
    registry: ProviderRegistry,
    commands: Sequence[CommandInfo] = (),
    command_failures: Sequence[PluginLoadFailure] = (),
) -> dict[str, Any]:
    """The ``--json`` document: providers (with config JSON schemas), plugin commands,
    failures, conflicts."""
    return {
        "providers": [
            {
                "kind": info.kind,
                "name": info.name,
                "distribution": info.distribution,
                "version": info.version,
                "plugin": info.plugin,
                "description": info.description,
                "config_schema": info.config_schema(),
            }
            for info in registry.list()
        ],
        "commands": [
            {
                "name": c.name,
                "distribution": c.distribution,
                "version": c.version,
                "plugin": c.plugin,
            }
            for c in commands
        ],
        "failures": [
            {
                "plugin": f.plugin,
                "distribution": f.distribution,
                "version": f.version,
                "error": f.error,
            }
            for f in [*registry.failures, *command_failures]
        ],
        "conflicts": [
            {
                "kind": c.kind,
                "name": c.name,
                "distributions": [p.distribution for p in c.providers],
                "message": c.error().message,
            }
            for c in registry.conflicts
        ],
    }


def _print_tables(
    registry: ProviderRegistry,
    commands: Sequence[CommandInfo],
    command_failures: Sequence[PluginLoadFailure],
    console: Console,
) -> None:
    conflicted = {(c.kind, c.name) for c in registry.conflicts}
    table = Table(title="memoweave providers", title_justify="left")
    for column in ("kind", "name", "distribution", "version"):
        table.add_column(column, no_wrap=True)
    table.add_column("description")
    for kind in KINDS:
        for info in registry.list(kind):
            name = info.name + (" (conflict)" if (kind, info.name) in conflicted else "")
            table.add_row(
                kind, name, info.distribution, info.version or "-", Text(info.description)
            )
    console.print(table)
    if commands:
        extra = Table(title="memoweave commands added by plugins", title_justify="left")
        for column in ("command", "distribution", "version"):
            extra.add_column(column, no_wrap=True)
        for command in commands:
            extra.add_row(command.name, command.distribution, command.version or "-")
        console.print(extra)
    if registry.conflicts:
        console.print("\n[bold yellow]Conflicts[/] (these names cannot be used):")
        for conflict in registry.conflicts:
            console.print(f"  {conflict.error().message}", markup=False)
    failures = [*registry.failures, *command_failures]
    if failures:
        console.print("\n[bold red]Plugins not loaded:[/]")
        for failure in failures:
            console.print(f"  {failure.describe()}", markup=False)


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON, with each config schema.")
@click.pass_context
def plugins(ctx: click.Context, as_json: bool) -> None:
    """List installed providers by kind, the commands plugins add, plugins that failed to
    load, and name conflicts (`memoweave plugins new NAME` starts a new plugin)."""
    if ctx.invoked_subcommand is not None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)  # shown in the output instead
        registry = load_registry()
    root = ctx.find_root().command
    commands: list[CommandInfo] = []
    command_failures: list[PluginLoadFailure] = []
    if isinstance(root, PluginCommandGroup):
        commands, command_failures = root.plugin_commands, root.command_failures
    if as_json:
        click.echo(json.dumps(registry_to_json(registry, commands, command_failures), indent=2))
    else:
        _print_tables(registry, commands, command_failures, make_console())


@plugins.command("new")
@click.argument("name")
@click.option(
    "--kind", type=click.Choice(scaffold.KINDS), default="vector_store", show_default=True
)
@click.option("--provider", help="The name users configure (default: NAME).")
@click.option(
    "--dir",
    "target",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where the plugin folder NAME is created.",
)
def new_plugin(name: str, kind: str, provider: str | None, target: Path) -> None:
    """Create the folder NAME: a complete plugin (distribution memoweave-NAME) that passes
    its conformance tests as it is; replace its provider module with your engine."""
    written = scaffold.new_plugin(name, target, kind=kind, provider=provider)
    folder = target / name
    click.echo(f"created {folder} ({len(written)} files); next:")
    click.echo(f'  pip install -e "{folder}[test]" && pytest {folder}')
