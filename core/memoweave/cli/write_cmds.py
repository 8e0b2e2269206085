"""``memoweave add``, ``update`` and ``delete``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from memoweave.cli.common import (
    ScopeArgs,
    config_option,
    echo_json,
    json_option,
    open_memory,
    parse_metadata,
    scope_options,
    server_option,
)
from memoweave.cli.errors import confirm
from memoweave.cli.render import add_table, make_console, memories_table
from memoweave.errors import ValidationError


def _read_text(text: str | None) -> str:
    """The TEXT argument, or stdin when it is ``-`` or omitted (and stdin is not a TTY)."""
    if text is not None and text != "-":
        return text
    stream = sys.stdin
    if text is None and stream.isatty():
        raise ValidationError(
            "no text to add", hint="Pass the text as an argument or pipe it on stdin."
        )
    try:
        return stream.read()
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"stdin is not valid {exc.encoding}: byte {exc.object[exc.start]:#04x} at offset "
            f"{exc.start}",
            hint="Pipe UTF-8 text (e.g. iconv -f latin1 -t utf-8), or pass the text as TEXT.",
        ) from None


@click.command()
@click.argument("text", required=False)
@config_option
@server_option
@scope_options
@click.option(
    "--infer/--no-infer",
    default=True,
    show_default=True,
    help="Extract facts (LLM, or the offline extractor) or store the text verbatim.",
)
@click.option(
    "--role",
    type=click.Choice(["user", "assistant"]),
    default="user",
    show_default=True,
    help="Who said the text.",
)
@click.option("--metadata", "metadata_pairs", multiple=True, help="KEY=VALUE (repeatable).")
@click.option("--metadata-json", help="Metadata as one JSON object.")
@click.option("--observed-at", help="When the text was said (ISO 8601); default: now.")
@json_option
def add(
    text: str | None,
    config_path: Path | None,
    server_url: str | None,
    scope: ScopeArgs,
    infer: bool,
    role: str,
    metadata_pairs: tuple[str, ...],
    metadata_json: str | None,
    observed_at: str | None,
    as_json: bool,
) -> None:
    """Add TEXT (or stdin) to the memories of the scope."""
    metadata = parse_metadata(metadata_pairs, metadata_json)
    content = _read_text(text)
    with open_memory(config_path, server_url) as memory:
        result = memory.add(
            [{"role": role, "content": content}],
            metadata=metadata,
            infer=infer,
            observed_at=observed_at,
            **scope.kwargs(),
        )
    if as_json:
        echo_json(result)
        return
    console = make_console()
    if not result["results"]:
        console.print("Nothing new to remember (no facts found, or all already known).")
        return
    console.print(add_table(result["results"]))


@click.command()
@click.argument("memory_id", required=False)
@config_option
@server_option
@scope_options
@click.option("--all", "delete_all", is_flag=True, help="Delete every memory of the scope.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation with --all.")
@json_option
def delete(
    memory_id: str | None,
    config_path: Path | None,
    server_url: str | None,
    scope: ScopeArgs,
    delete_all: bool,
    yes: bool,
    as_json: bool,
) -> None:
    """Delete MEMORY_ID, or with --all every memory of the scope (recorded in history)."""
    if (memory_id is None) == (not delete_all):
        raise ValidationError(
            "pass either MEMORY_ID or --all",
            hint="memoweave delete <id>, or memoweave delete --all --user-id <id>.",
        )
    if delete_all and not scope.kwargs():
        raise ValidationError(
            "--all needs a scope", hint="Pass --user-id, --agent-id and/or --run-id."
        )
    if delete_all:
        described = ", ".join(f"{k}={v}" for k, v in scope.kwargs().items())
        confirm(f"Delete every memory of {described}?", yes=yes)
    with open_memory(config_path, server_url) as memory:
        result: dict[str, Any]
        if delete_all:
            result = memory.delete_all(**scope.kwargs())
        else:
            assert memory_id is not None
            result = memory.delete(memory_id, **scope.kwargs())
    if as_json:
        echo_json(result)
    else:
        click.echo(result["message"])


@click.command()
@click.argument("memory_id")
@click.argument("text", required=False)
@config_option
@server_option
@scope_options
@click.option("--metadata", "metadata_pairs", multiple=True, help="KEY=VALUE (repeatable).")
@click.option("--metadata-json", help="Metadata as one JSON object (replaces the old one).")
@json_option
def update(
    memory_id: str,
    text: str | None,
    config_path: Path | None,
    server_url: str | None,
    scope: ScopeArgs,
    metadata_pairs: tuple[str, ...],
    metadata_json: str | None,
    as_json: bool,
) -> None:
    """Rewrite MEMORY_ID's text to TEXT and/or replace its metadata (recorded in history).

    With scope options, a memory of another scope is not found."""
    metadata = parse_metadata(metadata_pairs, metadata_json)
    with open_memory(config_path, server_url) as memory:
        result = memory.update(memory_id, text=text, metadata=metadata, **scope.kwargs())
    if as_json:
        echo_json(result)
        return
    make_console().print(memories_table([result], title=result["message"]))
