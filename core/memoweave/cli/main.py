"""The ``memoweave`` command line: a click group; each command lives in its own module."""

from __future__ import annotations

import click

from memoweave import __version__
from memoweave.cli.demo_cmd import demo
from memoweave.cli.doctor_cmd import doctor
from memoweave.cli.plugin_commands import PluginCommandGroup
from memoweave.cli.plugins_cmd import plugins
from memoweave.cli.read_cmds import get, history, list_memories, search
from memoweave.cli.setup_cmds import init, reset
from memoweave.cli.transfer_cmds import export_cmd, import_cmd
from memoweave.cli.write_cmds import add, delete, update


@click.group(cls=PluginCommandGroup)
@click.version_option(__version__, prog_name="memoweave")
def main() -> None:
    """memoweave: long-term memory for LLM applications."""


for _command in (
    init,
    add,
    search,
    list_memories,
    get,
    history,
    update,
    delete,
    reset,
    export_cmd,
    import_cmd,
    demo,
    doctor,
    plugins,
):
    main.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    main()
