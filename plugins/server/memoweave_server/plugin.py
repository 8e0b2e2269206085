"""Entry point of memoweave-server: adds ``memoweave serve`` and ``memoweave new-key``."""

from __future__ import annotations

from typing import Any

from memoweave.hookspecs import hookimpl

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


@hookimpl
def register_commands(cli: Any) -> None:
    """``serve`` (the REST server) and ``new-key`` (a key and its config entry)."""
    from memoweave_server.commands import new_key_command, serve

    cli.add_command(serve)
    cli.add_command(new_key_command)
