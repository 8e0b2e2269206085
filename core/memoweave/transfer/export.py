"""Writing a ``Memory``'s memories, with their history, as memoweave export JSONL."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from memoweave.memory.scope import Scope
from memoweave.memory.validate import check_bool
from memoweave.transfer.records import export_line, header

Progress = Callable[[int, int], None]
"""``progress(done, total)``, called after each page."""

PAGE = 256


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote."""

    memories: int
    events: int
    with_vectors: bool

    def as_dict(self) -> dict[str, Any]:
        return {"memories": self.memories, "events": self.events, "with_vectors": self.with_vectors}


def export_jsonl(
    memory: Any,
    out: TextIO,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    run_id: str | None = None,
    with_vectors: bool = False,
    progress: Progress | None = None,
) -> ExportReport:
    """Write every memory of the scope (of the whole store when no id is given), active,
    superseded and deleted, each with its history and optionally its vector, to ``out``.

    The first line is the format header (:func:`memoweave.transfer.records.header`)."""
    given = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    scope = (
        Scope.of(**given, operation="export")
        if any(v is not None for v in given.values())
        else None
    )
    check_bool("with_vectors", with_vectors)
    providers = memory._providers
    store, history = providers.vector_store, providers.history
    node = scope.filter() if scope is not None else None
    memories = events = 0
    with memory._claimed():
        total = store.count(filter=node)
        source = {
            "collection": memory.config.collection_name,
            "scope": scope.as_dict() if scope else None,
        }
        _write(out, header(count=total, with_vectors=with_vectors, source=source))
        cursor: str | None = None
        while True:
            page = store.list(filter=node, limit=PAGE, cursor=cursor)
            records = page.records
            if with_vectors and records:
                records = store.get([r.id for r in records], with_vectors=True)
            for record in records:
                log = history.events(record.id)
                _write(out, export_line(record.id, record.payload, log, record.vector))
                memories += 1
                events += len(log)
            if progress is not None:
                progress(memories, total)
            cursor = page.next_cursor
            if cursor is None:
                break
    out.flush()
    return ExportReport(memories, events, with_vectors)


def _write(out: TextIO, obj: dict[str, Any]) -> None:
    out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
