"""``memoweave doctor [--repair]``: one line per check, with the fix for each problem.

The provider checks (:mod:`memoweave.cli.provider_checks`) come first, then the data
checks (:mod:`memoweave.memory.doctor`). After a ``--repair`` that fixed something, the
provider checks are run again, so the report shows the state the repair left.
"""

from __future__ import annotations

from pathlib import Path

import click

from memoweave.cli.common import config_option, echo_json, json_option
from memoweave.cli.errors import ERROR_EXIT_CODE
from memoweave.cli.provider_checks import provider_checks
from memoweave.cli.render import printable
from memoweave.config import MemoryConfig
from memoweave.memory.doctor import Finding, run_doctor
from memoweave.memory.wiring import coerce_config

_MARKS = {"ok": "ok", "warn": "WARN", "fail": "FAIL", "fixed": "FIXED", "skipped": "skip"}


@click.command()
@config_option
@click.option("--repair", is_flag=True, help="Fix what can be fixed (never deletes a memory).")
@json_option
def doctor(config_path: Path | None, repair: bool, as_json: bool) -> None:
    """Check the providers, and that the store, the history and the indexes agree; exit 2
    if something fails.

    With --repair, rebuild what one side lost from the other: a lost Qdrant Edge metadata
    file from the shard, history rows from the store, store records from the history
    (re-embedded; their metadata is lost), missing index entries; finish an interrupted
    reset and roll back half-done writes.
    """
    config = coerce_config(str(config_path) if config_path else None)
    providers = _provider_findings(config)
    data = run_doctor(config, repair=repair)
    if any(f.status == "fixed" for f in data):
        providers = _provider_findings(config)
    findings = providers + data
    if as_json:
        echo_json([f.to_dict() for f in findings])
    else:
        for finding in findings:
            detail = f": {finding.detail}" if finding.detail else ""
            click.echo(printable(f"{_MARKS[finding.status]:>5}  {finding.name}{detail}"))
            if finding.fix and finding.status in ("fail", "warn"):
                click.echo(printable(f"       fix: {finding.fix}"))
    if any(f.status == "fail" for f in findings):
        raise SystemExit(ERROR_EXIT_CODE)


def _provider_findings(config: MemoryConfig) -> list[Finding]:
    return [
        Finding(c.name, "ok" if c.ok else "fail", c.detail, c.fix or "")
        for c in provider_checks(config)
    ]
