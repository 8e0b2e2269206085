"""The ``memoweave`` command line: a click group; each command lives in its own module.

Built-in commands are imported when they are run (``memoweave search`` imports the read
commands only, not the demo, transfer or doctor modules) or listed (``--help``).

The console script is :func:`run`: :func:`main`, then a quick exit (see there).

The command line runs numpy's OpenBLAS on one thread unless ``OPENBLAS_NUM_THREADS`` is
set: memoweave's matrix work is a matrix-vector product per search, and starting the
BLAS thread pool at numpy's import cost 40-50 ms CPU of every cold start on 2 cores.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

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


def run() -> None:
    """The ``memoweave`` console script: :func:`main`, then ``os._exit`` with its status.

    A finished built-in command has closed its stores and history (every write is
    durable), so the interpreter's own teardown, which frees every module, the model
    session and the store's maps one object at a time, is skipped: it cost ~90 ms CPU and
    0.1-0.4 s wall of each ``memoweave search`` on this 2-core machine. The ``atexit``
    handlers still run and stdout / stderr are flushed first. The exit is the
    interpreter's usual one after a plugin's command (its own buffers and finalisers are
    not ours to skip), when another (non-daemon) thread is still running, whose work may
    not be done, when flushing fails (a closed pipe), or when the command ended with an
    exception. Because the process ends right after, stores are closed with
    :func:`~memoweave.cli.common.exit_after_command`'s lighter close.
    """
    from memoweave.cli.common import exit_after_command

    exit_after_command()
    try:
        main()
    except SystemExit as done:
        status = done.code
        builtin = _builtin_command(sys.argv[1:])
        if not isinstance(status, int | None) or not builtin or _other_threads_running():
            raise
        atexit._run_exitfuncs()
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            raise done from None
        os._exit(status or 0)


def _builtin_command(args: list[str]) -> bool:
    """Whether ``args`` (the command line after the program) run a built-in command."""
    name = next((a for a in args if not a.startswith("-")), None)
    return name in BUILTIN_COMMANDS


def _other_threads_running() -> bool:
    main_thread = threading.main_thread()
    return any(
        t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()
    )


if __name__ == "__main__":  # pragma: no cover
    run()
