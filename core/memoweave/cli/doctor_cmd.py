"""``memoweave doctor [--repair]``: one line per check, with the fix for each problem."""

from __future__ import annotations

from pathlib import Path

import click

from memoweave.cli.common import config_option, echo_json, json_option
from memoweave.cli.errors import ERROR_EXIT_CODE
from memoweave.cli.render import printable
from memoweave.memory.doctor import run_doctor

_MARKS = {"ok": "ok", "warn": "WARN", "fail": "FAIL", "fixed": "FIXED", "skipped": "skip"}


@click.command()
@config_option
@click.option("--repair", is_flag=True, help="Fix what can be fixed (never deletes a memory).")
@json_option
def doctor(config_path: Path | None, repair: bool, as_json: bool) -> None:
    """Check that the store, the history and the indexes agree; exit 2 if one does not.

    With --repair, rebuild what one side lost from the other: a lost Qdrant Edge metadata
    file from the shard, history rows from the store, store records from the history
    (re-embedded; their metadata is lost), missing index entries; finish an interrupted
    reset and roll back half-done writes.
    """
    findings = run_doctor(str(config_path) if config_path else None, repair=repair)
    if as_json:
        echo_json([f.to_dict() for f in findings])
    else:
        for finding in findings:
            line = f"{_MARKS[finding.status]:>5}  {finding.name}: {finding.detail}"
            click.echo(printable(line))
            if finding.fix and finding.status in ("fail", "warn"):
                click.echo(printable(f"       fix: {finding.fix}"))
    if any(f.status == "fail" for f in findings):
        raise SystemExit(ERROR_EXIT_CODE)
