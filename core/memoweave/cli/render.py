"""Rich tables for memories, search results, add results and history events."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table
from rich.text import Text


def _short_date(value: Any) -> str:
    """``2024-04-06T18:40:00+00:00`` -> ``2024-04-06 18:40``."""
    if not isinstance(value, str) or not value:
        return "-"
    return value[:16].replace("T", " ")


def _meta(item: Mapping[str, Any]) -> str:
    metadata = item.get("metadata") or {}
    return ", ".join(f"{k}={v}" for k, v in metadata.items()) or ""


def memories_table(items: Sequence[Mapping[str, Any]], *, title: str) -> Table:
    """One row per memory: id, text, observed date, status, metadata."""
    table = Table(title=title, title_justify="left", show_lines=False)
    table.add_column("id", no_wrap=True, style="dim")
    table.add_column("memory", ratio=1)
    table.add_column("observed", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("metadata")
    for item in items:
        status = "superseded" if item.get("superseded_by") else "active"
        table.add_row(
            str(item.get("id")),
            Text(str(item.get("memory", ""))),
            _short_date(item.get("observed_at") or item.get("created_at")),
            status,
            Text(_meta(item)),
        )
    return table


def search_table(results: Sequence[Mapping[str, Any]], *, title: str, explain: bool) -> Table:
    """One row per hit, best first; with ``explain`` the rank of each signal."""
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("memory", ratio=1)
    if explain:
        table.add_column("dense", no_wrap=True)
        table.add_column("keyword", no_wrap=True)
    table.add_column("id", no_wrap=True, style="dim")
    for rank, hit in enumerate(results, start=1):
        row: list[Any] = [str(rank), f"{hit.get('score', 0.0):.4f}", Text(str(hit.get("memory")))]
        if explain:
            signals = hit.get("explain") or {}
            for name in ("dense", "keyword"):
                sig = signals.get(name)
                row.append(f"#{int(sig['rank'])} ({sig['score']:.3f})" if sig else "-")
        row.append(str(hit.get("id")))
        table.add_row(*row)
    return table


def add_table(results: Sequence[Mapping[str, Any]], *, title: str = "Changes") -> Table:
    """One row per change an ``add`` made (ADD, UPDATE, SUPERSEDE, DELETE)."""
    table = Table(title=title, title_justify="left")
    table.add_column("event", no_wrap=True)
    table.add_column("memory", ratio=1)
    table.add_column("id", no_wrap=True, style="dim")
    styles = {"ADD": "green", "UPDATE": "yellow", "SUPERSEDE": "magenta", "DELETE": "red"}
    for change in results:
        event = str(change.get("event"))
        table.add_row(
            Text(event, style=styles.get(event, "")),
            Text(str(change.get("memory", ""))),
            str(change.get("id")),
        )
    return table


def history_table(events: Sequence[Mapping[str, Any]], *, title: str) -> Table:
    """One row per history event, oldest first."""
    table = Table(title=title, title_justify="left")
    table.add_column("when", no_wrap=True)
    table.add_column("event", no_wrap=True)
    table.add_column("old", ratio=1)
    table.add_column("new", ratio=1)
    table.add_column("superseded by", no_wrap=True, style="dim")
    for event in events:
        table.add_row(
            _short_date(event.get("updated_at") or event.get("created_at")),
            str(event.get("event")),
            Text(str(event.get("old_memory") or "")),
            Text(str(event.get("new_memory") or "")),
            str(event.get("superseded_by") or ""),
        )
    return table
