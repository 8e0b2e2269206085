"""Rich tables for memories, search results, graph relations, add results and history
events.

Every stored string is shown through :func:`printable`: control characters (terminal
escapes, NUL, backspace...) and bidirectional overrides are shown escaped (``\\x1b``), so
a memory cannot clear the screen, set the terminal title or reorder what is displayed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(value: Any) -> str:
    """``str(value)`` with control characters and bidi overrides escaped."""
    return _UNSAFE.sub(_escape, str(value))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _short_date(value: Any) -> str:
    """``2024-04-06T18:40:00+00:00`` -> ``2024-04-06 18:40``."""
    if not isinstance(value, str) or not value:
        return "-"
    return value[:16].replace("T", " ")


def _date(value: Any) -> str:
    """``2024-04-06T18:40:00+00:00`` -> ``2024-04-06``."""
    return value[:10] if isinstance(value, str) and value else "-"


def _meta(item: Mapping[str, Any]) -> str:
    metadata = item.get("metadata") or {}
    return printable(", ".join(f"{k}={v}" for k, v in metadata.items()))


def _with_id(text: Any, memory_id: Any) -> Text:
    """The memory text with its id on a dim second line (keeps tables narrow)."""
    cell = Text(printable(text or ""))
    cell.append(f"\n{printable(memory_id)}", style="dim")
    return cell


def memories_table(items: Sequence[Mapping[str, Any]], *, title: str) -> Table:
    """One row per memory: text and id, observed date, status (if any is not active),
    metadata (if any is set)."""
    show_status = any(item.get("superseded_by") for item in items)
    show_meta = any(item.get("metadata") for item in items)
    table = Table(title=Text(printable(title)), title_justify="left")
    table.add_column("memory / id", ratio=1, min_width=38)
    table.add_column("observed", no_wrap=True)
    if show_status:
        table.add_column("status", no_wrap=True)
    if show_meta:
        table.add_column("metadata")
    for item in items:
        row: list[Any] = [
            _with_id(item.get("memory"), item.get("id")),
            _date(item.get("observed_at") or item.get("created_at")),
        ]
        if show_status:
            row.append("superseded" if item.get("superseded_by") else "active")
        if show_meta:
            row.append(Text(_meta(item)))
        table.add_row(*row)
    return table


def search_table(results: Sequence[Mapping[str, Any]], *, title: str, explain: bool) -> Table:
    """One row per hit, best first; with ``explain`` one column per signal that scored any
    hit (rank, score and share of the final score)."""
    table = Table(title=Text(printable(title)), title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("memory / id", ratio=1, min_width=38)
    signal_names: list[str] = []
    if explain:
        for hit in results:
            for name in hit.get("explain") or {}:
                if name not in signal_names:
                    signal_names.append(name)
        for name in signal_names:
            table.add_column(name, no_wrap=True)
    for rank, hit in enumerate(results, start=1):
        row: list[Any] = [
            str(rank),
            f"{hit.get('score', 0.0):.4f}",
            _with_id(hit.get("memory"), hit.get("id")),
        ]
        if explain:
            signals = hit.get("explain") or {}
            for name in signal_names:
                row.append(_signal_cell(signals.get(name), hit.get("score", 0.0)))
        table.add_row(*row)
    if not results:
        table.caption = "no results"
    return table


def _signal_cell(signal: Mapping[str, Any] | None, score: float) -> str:
    """Rank, raw score and the signal's share of the result's score."""
    if not signal:
        return "-"
    cell = f"#{int(signal['rank'])} {signal['score']:.2f}"
    if "contribution" in signal:
        share = signal["contribution"] / score if score > 0 else 0.0
        cell += f" ({share:.0%})"
    return cell


def relations_table(relations: Sequence[Mapping[str, Any]], *, title: str = "Relations") -> Table:
    """One row per graph relation a search reached, nearest first: the triple, its hop
    and how many memories assert it."""
    table = Table(title=Text(printable(title)), title_justify="left")
    table.add_column("source")
    table.add_column("relationship")
    table.add_column("destination")
    table.add_column("hop", justify="right", no_wrap=True)
    table.add_column("memories", justify="right", no_wrap=True)
    for relation in relations:
        table.add_row(
            Text(printable(relation.get("source", ""))),
            Text(printable(relation.get("relationship", ""))),
            Text(printable(relation.get("destination", ""))),
            str(relation.get("hop", "")),
            str(len(relation.get("memory_ids") or ())),
        )
    return table


def add_table(results: Sequence[Mapping[str, Any]], *, title: str = "Changes") -> Table:
    """One row per change an ``add`` made (ADD, UPDATE, SUPERSEDE, DELETE)."""
    table = Table(title=Text(printable(title)), title_justify="left")
    table.add_column("event", no_wrap=True)
    table.add_column("memory / id", ratio=1, min_width=38)
    styles = {"ADD": "green", "UPDATE": "yellow", "SUPERSEDE": "magenta", "DELETE": "red"}
    for change in results:
        event = str(change.get("event"))
        table.add_row(
            Text(event, style=styles.get(event, "")),
            _with_id(change.get("memory"), change.get("id")),
        )
    return table


def history_table(events: Sequence[Mapping[str, Any]], *, title: str) -> Table:
    """One row per history event, oldest first."""
    table = Table(title=Text(printable(title)), title_justify="left")
    table.add_column("when", no_wrap=True)
    table.add_column("event", no_wrap=True)
    table.add_column("old", ratio=1)
    table.add_column("new", ratio=1)
    for event in events:
        table.add_row(
            _short_date(event.get("updated_at") or event.get("created_at")),
            str(event.get("event")),
            Text(printable(event.get("old_memory") or "")),
            Text(printable(event.get("new_memory") or "")),
        )
    return table


def make_console(**options: Any) -> Console:
    """A Rich console; when output is not a terminal (piped, captured), 120 columns wide
    instead of Rich's 80 so that tables are not truncated."""
    console = Console(**options)
    if not console.is_terminal and "width" not in options:
        console = Console(width=120, **options)
    return console
