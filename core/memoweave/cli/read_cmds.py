"""``memoweave search``, ``list``, ``get`` and ``history``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memoweave.cli.common import (
    ScopeArgs,
    config_option,
    echo_json,
    json_option,
    open_memory,
    parse_filter_option,
    scope_options,
    server_option,
)
from memoweave.errors import NotFound


@click.command()
@click.argument("query")
@config_option
@server_option
@scope_options
@click.option("--top-k", type=int, default=10, show_default=True, help="How many results.")
@click.option("--filter", "filter_json", help='Metadata filter as JSON, e.g. \'{"topic": "x"}\'.')
@click.option("--threshold", type=float, help="Drop results whose fused score is below this.")
@click.option("--explain", is_flag=True, help="Show each signal's score and rank.")
@click.option(
    "--rerank", is_flag=True, help="Rerank with the configured reranker (the reranker section)."
)
@click.option("--include-superseded", is_flag=True, help="Also search superseded memories.")
@json_option
def search(
    query: str,
    config_path: Path | None,
    server_url: str | None,
    scope: ScopeArgs,
    top_k: int,
    filter_json: str | None,
    threshold: float | None,
    explain: bool,
    rerank: bool,
    include_superseded: bool,
    as_json: bool,
) -> None:
    """The memories of the scope most relevant to QUERY."""
    filters = parse_filter_option(filter_json)
    with open_memory(config_path, server_url) as memory:
        result = memory.search(
            query,
            filters=filters,
            top_k=top_k,
            threshold=threshold,
            explain=explain,
            rerank=rerank,
            include_superseded=include_superseded,
            **scope.kwargs(),
        )
        # printed before the stores close: closing an embedded store flushes its files
        # (tens to hundreds of ms of fsync), which the reader need not wait for
        _print_search(result, query, explain, as_json)


def _print_search(result: dict[str, Any], query: str, explain: bool, as_json: bool) -> None:
    if as_json:
        echo_json(result)
        return
    from memoweave.cli.render import make_console, relations_table, search_table  # rich: terminal

    console = make_console()
    console.print(search_table(result["results"], title=f"Search: {query}", explain=explain))
    if result.get("relations"):
        console.print(relations_table(result["relations"]))


@click.command(name="list")
@config_option
@server_option
@scope_options
@click.option("--top-k", type=int, default=100, show_default=True, help="Page size.")
@click.option("--cursor", help="next_cursor of the previous page.")
@click.option("--filter", "filter_json", help="Metadata filter as JSON.")
@click.option("--include-superseded", is_flag=True, help="Also list superseded memories.")
@json_option
def list_memories(
    config_path: Path | None,
    server_url: str | None,
    scope: ScopeArgs,
    top_k: int,
    cursor: str | None,
    filter_json: str | None,
    include_superseded: bool,
    as_json: bool,
) -> None:
    """One page of the scope's memories (use --cursor for the next one)."""
    filters = parse_filter_option(filter_json)
    with open_memory(config_path, server_url) as memory:
        result = memory.get_all(
            filters=filters,
            top_k=top_k,
            cursor=cursor,
            include_superseded=include_superseded,
            **scope.kwargs(),
        )
    if as_json:
        echo_json(result)
        return
    from memoweave.cli.render import make_console, memories_table

    console = make_console()
    console.print(memories_table(result["results"], title="Memories"))
    if result["next_cursor"]:
        console.print(f"More: --cursor {result['next_cursor']}", markup=False)


@click.command()
@click.argument("memory_id")
@config_option
@server_option
@scope_options
@json_option
def get(
    memory_id: str,
    config_path: Path | None,
    server_url: str | None,
    scope: ScopeArgs,
    as_json: bool,
) -> None:
    """One memory by id."""
    with open_memory(config_path, server_url) as memory:
        item = memory.get(memory_id, **scope.kwargs())
    if item is None:
        raise NotFound(
            f"no memory with id {memory_id}" + (" in this scope" if scope.kwargs() else "")
        )
    if as_json:
        echo_json(item)
        return
    from memoweave.cli.render import make_console, memories_table

    make_console().print(memories_table([item], title="Memory"))


@click.command()
@click.argument("memory_id")
@config_option
@server_option
@scope_options
@json_option
def history(
    memory_id: str,
    config_path: Path | None,
    server_url: str | None,
    scope: ScopeArgs,
    as_json: bool,
) -> None:
    """The events of one memory, oldest first (ADD, UPDATE, SUPERSEDE, DELETE).

    With scope options, a memory of another scope is not found.
    """
    with open_memory(config_path, server_url) as memory:
        events = memory.history(memory_id, **scope.kwargs())
    if scope.kwargs() and not events:
        raise NotFound(f"no memory with id {memory_id} in this scope")
    if as_json:
        echo_json(events)
        return
    from memoweave.cli.render import history_table, make_console

    make_console().print(history_table(events, title=f"History of {memory_id}"))
