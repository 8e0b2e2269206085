"""Uniform error reporting for every ``memoweave`` command.

A :class:`MemoweaveError` escaping a command prints ``error[<code>]: <message>`` and
``hint: <hint>`` to stderr and exits with :data:`ERROR_EXIT_CODE`.
"""

from __future__ import annotations

from typing import Any, NoReturn

import click

from memoweave.errors import MemoweaveError

ERROR_EXIT_CODE = 2


def report_error(error: MemoweaveError) -> NoReturn:
    """Print ``error`` in the CLI format and exit with code 2."""
    click.echo(f"error[{error.code}]: {error.message}", err=True)
    click.echo(f"hint: {error.hint}", err=True)
    raise SystemExit(ERROR_EXIT_CODE)


class MemoweaveGroup(click.Group):
    """A click group whose commands report :class:`MemoweaveError` with :func:`report_error`."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemoweaveError as error:
            report_error(error)
