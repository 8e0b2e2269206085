"""The ``memoweave`` command line: a click group; each command lives in its own module.

Built-in commands are imported when they are run (``memoweave search`` imports the read
commands only, not the demo, transfer or doctor modules) or listed (``--help``).

The command line runs numpy's OpenBLAS on one thread unless ``OPENBLAS_NUM_THREADS`` is
set: memoweave's matrix work is a matrix-vector product per search, and starting the
BLAS thread pool at numpy's import cost 40-50 ms CPU of every cold start on 2 cores.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before anything imports numpy

import click

from memoweave import __version__
from memoweave.cli.plugin_commands import PluginCommandGroup

BUILTIN_COMMANDS: dict[str, str] = {
    "init": "memoweave.cli.setup_cmds:init",
    "add": "memoweave.cli.write_cmds:add",
    "search": "memoweave.cli.read_cmds:search",
    "list": "memoweave.cli.read_cmds:list_memories",
    "get": "memoweave.cli.read_cmds:get",
    "history": "memoweave.cli.read_cmds:history",
    "update": "memoweave.cli.write_cmds:update",
    "delete": "memoweave.cli.write_cmds:delete",
    "reset": "memoweave.cli.setup_cmds:reset",
    "export": "memoweave.cli.transfer_cmds:export_cmd",
    "import": "memoweave.cli.transfer_cmds:import_cmd",
    "demo": "memoweave.cli.demo_cmd:demo",
    "doctor": "memoweave.cli.doctor_cmd:doctor",
    "plugins": "memoweave.cli.plugins_cmd:plugins",
}
"""Command name -> ``module:attribute`` of its click command."""


@click.group(cls=PluginCommandGroup, builtin_commands=BUILTIN_COMMANDS)
@click.version_option(__version__, prog_name="memoweave")
def main() -> None:
    """memoweave: long-term memory for LLM applications."""


if __name__ == "__main__":  # pragma: no cover
    main()
