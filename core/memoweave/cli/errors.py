"""Uniform error reporting for every ``memoweave`` command.

A :class:`MemoweaveError` escaping a command prints ``error[<code>]: <message>`` and
``hint: <hint>`` to stderr and exits with :data:`ERROR_EXIT_CODE`.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import click

from memoweave.errors import MemoweaveError, NotFound

ERROR_EXIT_CODE = 2
_CLI_HINTS: dict[type[MemoweaveError], str] = {
    NotFound: "Check the id; `memoweave list --user-id <id>` shows the memories of a scope.",
}
"""Hints that name the command instead of the Python API, used when an error carries its
class's default hint."""


class ConfirmationRequired(MemoweaveError):
    """A destructive command needs a confirmation that no terminal can give."""

    code = "confirmation_required"
    default_hint = "Pass --yes to confirm without a prompt."


def report_error(error: MemoweaveError) -> NoReturn:
    """Print ``error`` in the CLI format and exit with code 2."""
    hint = error.hint
    if hint == type(error).default_hint:
        hint = _CLI_HINTS.get(type(error), hint)
    click.echo(f"error[{error.code}]: {error.message}", err=True)
    click.echo(f"hint: {hint}", err=True)
    raise SystemExit(ERROR_EXIT_CODE)


def stdin_is_terminal() -> bool:
    """Whether a prompt can be answered (stdin is a TTY)."""
    return sys.stdin.isatty()


def confirm(question: str, *, yes: bool) -> None:
    """Ask ``question`` unless ``yes``; without a terminal raise ``ConfirmationRequired``;
    a "no" exits with code 1 and changes nothing."""
    if yes:
        return
    if not stdin_is_terminal():
        raise ConfirmationRequired(
            f"{question} needs confirmation, and stdin is not a terminal",
            hint="Pass --yes to confirm without a prompt.",
        )
    if not click.confirm(question, default=False, err=True):
        click.echo("Nothing changed.", err=True)
        raise SystemExit(1)


class MemoweaveGroup(click.Group):
    """A click group whose commands report :class:`MemoweaveError` with :func:`report_error`."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemoweaveError as error:
            report_error(error)
