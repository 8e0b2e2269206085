"""Entry point of memoweave-mcp: adds ``memoweave mcp``."""

from __future__ import annotations

from typing import Any

from memoweave.hookspecs import hookimpl

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


@hookimpl
def register_commands(cli: Any) -> None:
    """``mcp``: the MCP server over stdio or streamable HTTP."""
    from memoweave_mcp.commands import mcp_command

    cli.add_command(mcp_command)
