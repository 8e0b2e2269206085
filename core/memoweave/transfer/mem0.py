"""Importing a mem0 installation: its vector store (through a plugin's mem0 reader) and its
SQLite history, converted to memoweave export lines and imported by
:func:`memoweave.transfer.import_jsonl` (so every guarantee of a file import holds: checked
first, idempotent, resumable, re-embedded when the embedder differs).

mem0 keeps one flat payload per memory: ``data`` (the text), ``hash``, ``user_id``,
``agent_id``, ``run_id``, ``actor_id``, ``role``, ``created_at``, ``updated_at``,
``expiration_date``, ``attributed_to``, ``text_lemmatized`` and the caller's metadata keys.
Its history table has one row per ADD / UPDATE / DELETE. Memories mem0 deleted have no
vector left; their history rows are counted, not imported.
"""

from __future__ import annotations

import json
import os
import runpy
import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

import yaml

from memoweave.errors import ConfigError, ValidationError
from memoweave.hookspecs import MEM0_SOURCE_HOOK
from memoweave.transfer.importer import ImportReport, Progress, import_jsonl
from memoweave.transfer.records import header

_CORE_KEYS = frozenset(
    {
        "data", "hash", "text_lemmatized", "created_at", "updated_at", "user_id", "agent_id",
        "run_id", "actor_id", "role", "attributed_to", "expiration_date", "memory_type",
    }
)  # fmt: skip
_PAGE = 256


@dataclass(frozen=True)
class Mem0Point:
    """One record of mem0's vector store: id, flat payload, vector (``None`` if absent)."""

    id: str
    payload: dict[str, Any]
    vector: list[float] | None = None


class Mem0Source(Protocol):
    """What a plugin's mem0 reader provides (registered with ``register_mem0_sources``)."""

    def points(self, page_size: int) -> Iterator[list[Mem0Point]]:
        """Every memory of mem0's collection, ``page_size`` at a time, with vectors."""

    def close(self) -> None:
        """Release the connection."""


@dataclass
class Mem0Report:
    """A mem0 import: the file import's report plus what only mem0 has."""

    memories: int = 0
    history_rows: int = 0
    deleted_history_rows: int = 0
    target_collection: str = ""
    imported: ImportReport = field(default_factory=ImportReport)
    ids: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out = self.imported.as_dict()
        for error in out["errors"]:
            error["mem0_id"] = self.ids[error["line"] - 2] if error["line"] >= 2 else None
        return {
            **out,
            "mem0_memories": self.memories,
            "mem0_history_rows": self.history_rows,
            "history_rows_of_deleted_memories": self.deleted_history_rows,
            "target_collection": self.target_collection,
        }


def load_mem0_config(path: str | Path) -> dict[str, Any]:
    """A mem0 configuration from a JSON or YAML file, or a Python file defining a dict named
    ``config`` (the file is run: only use your own)."""
    file = Path(path).expanduser()
    try:
        if file.suffix == ".py":
            data = runpy.run_path(str(file)).get("config")
        else:
            text = file.read_text(encoding="utf-8")
            data = json.loads(text) if file.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"{file}: cannot read the mem0 configuration: {exc}",
            hint="Pass a JSON or YAML file, or a .py file that defines config = {...}.",
            details={"file": str(file)},
        ) from exc
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{file}: the mem0 configuration is not a mapping",
            hint="Write it as {vector_store: ..., embedder: ..., llm: ...} (mem0's layout); "
            "a .py file must define config = {...}.",
            details={"file": str(file)},
        )
    return dict(data)


def open_source(mem0_config: Mapping[str, Any], registry: Any = None) -> Mem0Source:
    """The reader of mem0's vector store named in ``mem0_config`` (mem0's defaults:
    Qdrant on ``/tmp/qdrant``, collection ``mem0``)."""
    section = mem0_config.get("vector_store") or {"provider": "qdrant"}
    provider = section.get("provider") or "qdrant"
    config = dict(section.get("config") or {})
    factories, broken = _factories()
    factory = factories.get(provider)
    if factory is None:
        installed = ", ".join(sorted(factories)) or "none"
        failed = "".join(f"; {name} failed to register: {error}" for name, error in broken)
        raise ConfigError(
            f"no installed plugin reads mem0's {provider!r} vector store "
            f"(readers: {installed}){failed}",
            hint="memoweave-qdrant reads qdrant, memoweave-milvus milvus, memoweave-upstash "
            "upstash_vector; install the one for your store.",
            details={"path": "vector_store.provider"},
        )
    return factory(config)


def history_path(mem0_config: Mapping[str, Any]) -> Path:
    """mem0's SQLite history: ``history_db_path``, else ``$MEM0_DIR/history.db`` (mem0's
    default, ``~/.mem0/history.db``)."""
    configured = mem0_config.get("history_db_path")
    if configured:
        return Path(str(configured)).expanduser()
    return Path(os.environ.get("MEM0_DIR") or Path.home() / ".mem0") / "history.db"


def import_mem0(
    memory: Any,
    mem0_config: Mapping[str, Any],
    *,
    skip_invalid: bool = False,
    batch_size: int = 256,
    progress: Progress | None = None,
    source: Mem0Source | None = None,
) -> Mem0Report:
    """Copy every memory of the mem0 installation ``mem0_config`` describes, with its
    history, into ``memory`` (see the module docstring)."""
    report = Mem0Report(target_collection=memory.config.collection_name)
    events = _history(history_path(mem0_config))
    reader = source or open_source(mem0_config)
    with tempfile.TemporaryDirectory(prefix="memoweave-mem0-") as scratch:
        spool = Path(scratch) / "mem0.jsonl"
        try:
            with spool.open("w", encoding="utf-8") as out:
                _spool(reader, events, out, report)
        finally:
            reader.close()
        report.deleted_history_rows = sum(len(rows) for rows in events.values())
        report.imported = import_jsonl(
            memory, spool, skip_invalid=skip_invalid, batch_size=batch_size, progress=progress
        )
    return report


def _spool(
    reader: Mem0Source, events: dict[str, list[dict[str, Any]]], out: IO[str], report: Mem0Report
) -> None:
    out.write(json.dumps(header(count=0, with_vectors=True, source={"mem0": True})) + "\n")
    for page in reader.points(_PAGE):
        for point in page:
            rows = events.pop(point.id, [])
            report.memories += 1
            report.history_rows += len(rows)
            report.ids.append(point.id)
            out.write(json.dumps(to_line(point, rows), ensure_ascii=False) + "\n")


def to_line(point: Mem0Point, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The memoweave export line of one mem0 memory and its history rows."""
    payload = point.payload
    line: dict[str, Any] = {"id": point.id, "memory": payload.get("data")}
    for key in ("user_id", "agent_id", "run_id", "actor_id", "created_at", "updated_at"):
        if payload.get(key) not in (None, ""):
            line[key] = payload[key]
    role = payload.get("role") or payload.get("attributed_to")
    if role:
        line["role"] = role
    if payload.get("expiration_date"):
        line["expiration_date"] = payload["expiration_date"]
    if payload.get("memory_type"):
        line["memory_type"] = payload["memory_type"]
    line.setdefault("created_at", payload.get("updated_at") or _first_time(rows))
    line["metadata"] = {k: v for k, v in payload.items() if k not in _CORE_KEYS}
    created = line["created_at"]
    line["history"] = [_event(row, created) for row in rows]
    if point.vector is not None:
        line["vector"] = point.vector
    return line


def _event(row: Mapping[str, Any], fallback: Any) -> dict[str, Any]:
    event = {
        "id": row["id"],
        "event": row["event"],
        "old_memory": row.get("old_memory"),
        "new_memory": row.get("new_memory"),
        # mem0 writes an UPDATE with the memory's creation time and the change's updated_at
        "created_at": (row.get("updated_at") if row["event"] != "ADD" else None)
        or row.get("created_at")
        or fallback,
        "updated_at": row.get("updated_at"),
        "is_deleted": bool(row.get("is_deleted")),
    }
    for key in ("actor_id", "role"):
        if row.get(key):
            event[key] = row[key]
    return event


def _first_time(rows: list[dict[str, Any]]) -> Any:
    times = [r.get("created_at") or r.get("updated_at") for r in rows]
    return min((t for t in times if t), default=None)


def _history(path: Path) -> dict[str, list[dict[str, Any]]]:
    """mem0's history rows by memory id, oldest first; empty when there is no database."""
    if not path.is_file():
        return {}
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ConfigError(f"cannot open mem0's history {path}: {exc}") from exc
    try:
        conn.row_factory = sqlite3.Row
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "history" not in tables:
            return {}
        rows = conn.execute(
            "SELECT * FROM history WHERE event IN ('ADD', 'UPDATE', 'DELETE') "
            "ORDER BY created_at, updated_at"
        ).fetchall()
    except sqlite3.Error as exc:
        raise ValidationError(
            f"{path} is not a mem0 history database: {exc}",
            hint="Point history_db_path at mem0's history.db (default ~/.mem0/history.db).",
        ) from exc
    finally:
        conn.close()
    by_memory: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_memory.setdefault(row["memory_id"], []).append(dict(row))
    return by_memory


def _factories() -> tuple[dict[str, Callable[[dict[str, Any]], Mem0Source]], list[tuple[str, str]]]:
    """The mem0 readers registered by the installed plugins, by mem0 provider name, and
    ``(plugin, error)`` for each plugin whose hook failed (it must not hide the others)."""
    from memoweave.plugins import get_plugin_manager
    from memoweave.plugins.host import one_line

    found: dict[str, Callable[[dict[str, Any]], Mem0Source]] = {}
    broken: list[tuple[str, str]] = []

    def register(name: str, factory: Callable[[dict[str, Any]], Mem0Source]) -> None:
        found[name] = factory

    pm = get_plugin_manager()
    for impl in getattr(pm.hook, MEM0_SOURCE_HOOK).get_hookimpls():
        try:
            impl.function(**dict.fromkeys(impl.argnames, register))
        except Exception as exc:
            broken.append((impl.plugin_name, one_line(exc)))
    return found, broken
