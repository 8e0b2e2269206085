"""The ``memoweave`` command line: a click group; each command lives in its own module."""

from __future__ import annotations

import click

from memoweave import __version__
from memoweave.cli.errors import MemoweaveGroup
from memoweave.cli.plugins_cmd import plugins


@click.group(cls=MemoweaveGroup)
@click.version_option(__version__, prog_name="memoweave")
def main() -> None:
    """memoweave: long-term memory for LLM applications."""


main.add_command(plugins)


if __name__ == "__main__":  # pragma: no cover
    main()
