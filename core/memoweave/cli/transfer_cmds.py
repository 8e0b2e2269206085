"""``memoweave export`` and ``memoweave import`` (JSONL files, or a mem0 installation)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)

from memoweave.cli.common import ScopeArgs, config_option, echo_json, open_memory, scope_options
from memoweave.config import MemoryConfig
from memoweave.config.mem0 import translate_mem0
from memoweave.errors import ValidationError
from memoweave.memory.api import Memory
from memoweave.transfer import export_jsonl, import_jsonl
from memoweave.transfer.mem0 import import_mem0, load_mem0_config

ProgressFn = Callable[[int, int], None]


@contextmanager
def progress_bar(label: str, *, enabled: bool) -> Iterator[ProgressFn | None]:
    """A rich progress bar on stderr (counts, rate, elapsed); ``None`` when disabled."""
    if not enabled:
        yield None
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rate]:>8.1f} records/s"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task(label, total=None, rate=0.0)

        def update(done: int, total: int) -> None:
            elapsed = bar.tasks[task].elapsed or 0.0
            bar.update(task, completed=done, total=total, rate=done / elapsed if elapsed else 0.0)

        yield update


@click.command(name="export")
@config_option
@scope_options
@click.option("--with-vectors", is_flag=True, help="Include each memory's vector.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to FILE instead of stdout.",
)
def export_cmd(
    config_path: Path | None, scope: ScopeArgs, with_vectors: bool, output: Path | None
) -> None:
    """Write the memories of the scope (all of them without scope options), with their
    history, as memoweave JSONL (one line per memory after a format header)."""
    with open_memory(config_path) as memory:
        if output is None:
            report = export_jsonl(memory, sys.stdout, with_vectors=with_vectors, **scope.kwargs())
        else:
            with output.open("w", encoding="utf-8") as out:
                report = export_jsonl(memory, out, with_vectors=with_vectors, **scope.kwargs())
    if output is not None:
        click.echo(
            f"Exported {report.memories} memories ({report.events} history events) to {output}",
            err=True,
        )


@click.command(name="import")
@click.argument("file", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@config_option
@click.option(
    "--from-mem0",
    "mem0_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Import the mem0 installation this mem0 config describes (JSON, YAML, or a .py "
    "file defining config = {...}) instead of a FILE; without --config the target is the "
    "same config translated (docs/migrating-from-mem0.md).",
)
@click.option("--skip-invalid", is_flag=True, help="Import the valid lines, report the others.")
@click.option("--batch-size", type=click.IntRange(1, 10_000), default=256, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary, no progress bar.")
def import_cmd(
    file: str | None,
    config_path: Path | None,
    mem0_path: Path | None,
    skip_invalid: bool,
    batch_size: int,
    as_json: bool,
) -> None:
    """Import a `memoweave export` FILE (``-`` for stdin), or a mem0 installation with
    --from-mem0. Running it again adds nothing twice; an interrupted run resumes."""
    if (file is None) == (mem0_path is None):
        raise ValidationError(
            "pass either FILE or --from-mem0 CONFIG",
            hint="memoweave import memories.jsonl (- for stdin), or "
            "memoweave import --from-mem0 mem0_config.json.",
        )
    options: dict[str, Any] = {"skip_invalid": skip_invalid, "batch_size": batch_size}
    if mem0_path is not None:
        mem0 = load_mem0_config(mem0_path)
        target: Any = (
            str(config_path)
            if config_path is not None
            else MemoryConfig.from_dict(translate_mem0(mem0), source=str(mem0_path))
        )
        with Memory(target) as memory, progress_bar("Importing", enabled=not as_json) as bar:
            summary = import_mem0(memory, mem0, progress=bar, **options).as_dict()
    else:
        with (
            open_memory(config_path) as memory,
            progress_bar("Importing", enabled=not as_json) as bar,
        ):
            assert file is not None  # exactly one of FILE and --from-mem0, checked above
            source = sys.stdin if file == "-" else file
            summary = import_jsonl(memory, source, progress=bar, **options).as_dict()
    if as_json:
        echo_json(summary)
        return
    click.echo(
        f"Imported {summary['records']} records in {summary['seconds']:.1f} s "
        f"({summary['records_per_second']:.0f}/s): {summary['written']} written, "
        f"{summary['unchanged']} unchanged, {summary['events_added']} history events added, "
        f"{summary['embedded']} embedded, {summary['vectors_reused']} vectors reused"
    )
    if mem0_path is not None:
        click.echo(
            f"mem0: {summary['mem0_memories']} memories with {summary['mem0_history_rows']} "
            f"history rows, into collection {summary['target_collection']!r}; "
            f"{summary['history_rows_of_deleted_memories']} history rows of memories mem0 "
            "had deleted were not imported"
        )
    for error in summary["errors"]:
        where = f"mem0 id {error['mem0_id']}" if error.get("mem0_id") else f"line {error['line']}"
        click.echo(f"skipped {where}: {error['reason']}", err=True)
    if summary["invalid"] > len(summary["errors"]):
        click.echo(f"... {summary['invalid'] - len(summary['errors'])} more skipped", err=True)
