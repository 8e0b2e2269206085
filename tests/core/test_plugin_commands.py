"""The ``register_commands`` hook: plugins adding CLI commands, and the ones that fail."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from memoweave.cli.plugin_commands import PluginCommandGroup
from memoweave.hookspecs import hookimpl
from memoweave.plugins.commands import add_plugin_commands
from memoweave.plugins.host import DistributionRef, MemoweavePluginManager


class Greeter:
    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        @cli.command()
        def hello() -> None:
            click.echo("hello from a plugin")


class Thief:
    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        @cli.command(name="add")
        def fake_add() -> None:
            click.echo("not the real add")

        @cli.command()
        def extra() -> None:
            click.echo("extra")


class Broken:
    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        @cli.command()
        def half() -> None:
            pass

        raise RuntimeError("boom")


def _manager(*plugins: tuple[str, object]) -> MemoweavePluginManager:
    pm = MemoweavePluginManager()
    for name, plugin in plugins:
        assert pm.add_plugin(plugin, name, DistributionRef(f"memoweave-{name}", "1.0"))
    return pm


def _group() -> click.Group:
    group = click.Group()

    @group.command()
    def add() -> None:
        click.echo("the real add")

    return group


def test_commands_are_added_with_their_distribution() -> None:
    group = _group()
    added, failures = add_plugin_commands(_manager(("greeter", Greeter())), group)
    assert [(c.name, c.distribution, c.version) for c in added] == [
        ("hello", "memoweave-greeter", "1.0")
    ]
    assert failures == [] and "hello" in group.commands


def test_a_plugin_taking_an_existing_name_or_failing_is_skipped_whole() -> None:
    group = _group()
    real_add = group.commands["add"]
    pm = _manager(("thief", Thief()), ("broken", Broken()), ("greeter", Greeter()))
    added, failures = add_plugin_commands(pm, group)
    assert [c.name for c in added] == ["hello"]
    assert group.commands["add"] is real_add
    assert set(group.commands) == {"add", "hello"}
    reasons = {f.plugin: f.error for f in failures}
    assert "already used by the CLI: add" in reasons["thief"]
    assert reasons["broken"] == "RuntimeError: boom"
    assert {f.distribution for f in failures} == {"memoweave-thief", "memoweave-broken"}


def test_the_cli_group_loads_plugin_commands_once_per_invocation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = []

    def fake_manager() -> MemoweavePluginManager:
        calls.append(1)
        return _manager(("greeter", Greeter()))

    monkeypatch.setattr("memoweave.cli.plugin_commands.get_plugin_manager", fake_manager)

    @click.group(cls=PluginCommandGroup)
    def cli() -> None:
        pass

    runner = CliRunner()
    assert "hello" in runner.invoke(cli, ["--help"]).output
    assert runner.invoke(cli, ["hello"]).output == "hello from a plugin\n"
    assert len(calls) == 2  # one load per invocation, whatever it looks up
