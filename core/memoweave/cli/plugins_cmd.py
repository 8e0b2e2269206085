"""``memoweave plugins``: the installed providers, load failures and name conflicts."""

from __future__ import annotations

import json
import warnings
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from memoweave.cli.render import make_console
from memoweave.plugins import KINDS, PluginLoadWarning, ProviderRegistry, load_registry


def registry_to_json(registry: ProviderRegistry) -> dict[str, Any]:
    """The ``--json`` document: providers (with config JSON schemas), failures, conflicts."""
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
        "failures": [
            {
                "plugin": f.plugin,
                "distribution": f.distribution,
                "version": f.version,
                "error": f.error,
            }
            for f in registry.failures
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


def _print_tables(registry: ProviderRegistry, console: Console) -> None:
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
    if registry.conflicts:
        console.print("\n[bold yellow]Conflicts[/] (these names cannot be used):")
        for conflict in registry.conflicts:
            console.print(f"  {conflict.error().message}", markup=False)
    if registry.failures:
        console.print("\n[bold red]Plugins not loaded:[/]")
        for failure in registry.failures:
            console.print(f"  {failure.describe()}", markup=False)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON, with each config schema.")
def plugins(as_json: bool) -> None:
    """List installed providers by kind, plugins that failed to load, and name conflicts."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginLoadWarning)  # shown in the output instead
        registry = load_registry()
    if as_json:
        click.echo(json.dumps(registry_to_json(registry), indent=2))
    else:
        _print_tables(registry, make_console())
