"""Importing memoweave export JSONL into a ``Memory``: checked first, then written in
idempotent, journaled batches.

Contract of :func:`import_jsonl`:

- **checked before anything is written**: every line is parsed and validated (and its id
  looked up in the target store) first; bad lines are reported as ``line N: reason``. With
  ``skip_invalid=False`` one bad line means nothing is written (``ValidationError`` whose
  ``details["errors"]`` lists them); with ``skip_invalid=True`` the others are imported;
- **idempotent**: ids are kept, so a second run adds nothing; a memory already stored
  with the same payload and all its history events is left alone (``unchanged``);
- **resumable**: each batch is one journaled write (store, history, keyword and entity
  index together or not at all, see :mod:`memoweave.memory.transaction`); a run killed at
  any point leaves whole batches, and running it again finishes the rest;
- **vectors**: the file's vectors are reused only when the target's embedder reproduces
  them (a sample of stored texts is re-embedded and compared); otherwise, and for records
  without a vector, the texts are embedded by the target's embedder;
- **tenant safety**: an id that exists in the target under another scope is a bad line,
  never overwritten.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from memoweave.errors import MemoweaveError, ValidationError
from memoweave.memory.clock import iso, utcnow
from memoweave.memory.payload import index_doc
from memoweave.memory.transaction import WritePlan, apply_plan
from memoweave.memory.validate import check_bool
from memoweave.providers.vector_store import StoredRecord, VectorRecord
from memoweave.runtime.steps import run
from memoweave.transfer.records import ImportRecord, check_header, parse_line

Progress = Callable[[int, int], None]
"""``progress(done, total)``: records processed so far and records to process."""

BATCH = 256
MAX_REPORTED = 100
SAMPLES = 3
SAME_EMBEDDER_COSINE = 0.99


@dataclass(frozen=True)
class LineError:
    """One bad line and why."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass
class ImportReport:
    """What an import did."""

    records: int = 0
    written: int = 0
    unchanged: int = 0
    events_added: int = 0
    embedded: int = 0
    vectors_reused: int = 0
    invalid: list[LineError] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        """Records processed per second."""
        return self.records / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "written": self.written,
            "unchanged": self.unchanged,
            "events_added": self.events_added,
            "embedded": self.embedded,
            "vectors_reused": self.vectors_reused,
            "invalid": len(self.invalid),
            "errors": [{"line": e.line, "reason": e.reason} for e in self.invalid[:MAX_REPORTED]],
            "seconds": round(self.seconds, 3),
            "records_per_second": round(self.rate, 1),
        }


@dataclass
class _Checked:
    valid: int = 0
    bad: list[LineError] = field(default_factory=list)
    samples: list[tuple[str, list[float]]] = field(default_factory=list)


def import_jsonl(
    memory: Any,
    source: str | Path | IO[str],
    *,
    skip_invalid: bool = False,
    batch_size: int = BATCH,
    progress: Progress | None = None,
) -> ImportReport:
    """Import a memoweave export (a path or a text stream) into ``memory`` (see the module
    docstring for the guarantees)."""
    check_bool("skip_invalid", skip_invalid)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValidationError(
            f"batch_size must be a positive integer, got {batch_size!r}", hint="Use e.g. 256."
        )
    start = time.perf_counter()
    with _seekable(source) as path:
        memory._ensure_ready()
        checked = _check(memory, path, batch_size)
        report = ImportReport(records=checked.valid, invalid=checked.bad)
        if checked.bad and not skip_invalid:
            first = checked.bad[0]
            raise ValidationError(
                f"{len(checked.bad)} invalid line(s), nothing was imported; first: {first}",
                hint="Fix the lines listed in details['errors'], or skip them with "
                "--skip-invalid (skip_invalid=True).",
                details={"errors": [{"line": e.line, "reason": e.reason} for e in checked.bad]},
            )
        reuse_dims = _reusable_dims(memory, checked.samples)
        skip = {e.line for e in checked.bad}
        done = 0
        for batch in _batches(_records(path, skip), batch_size):
            with memory._claimed([r.id for r in batch]):
                _write_batch(memory, batch, reuse_dims, report)
            done += len(batch)
            if progress is not None:
                progress(done, checked.valid)
    report.seconds = time.perf_counter() - start
    return report


# -- reading ------------------------------------------------------------------------------


@contextmanager
def _seekable(source: str | Path | IO[str]) -> Iterator[Path]:
    """A file path to read twice: ``source`` itself, or a spooled copy of a stream."""
    if isinstance(source, (str, Path)):
        path = Path(source).expanduser()
        if not path.is_file():
            raise ValidationError(
                f"no such file: {path}", hint="Pass the path of a `memoweave export` file."
            )
        yield path
        return
    if not hasattr(source, "read"):
        raise ValidationError(
            f"source must be a path or a text stream, got {type(source).__name__}",
            hint="Pass a file path, or an open text file.",
        )
    with tempfile.TemporaryDirectory(prefix="memoweave-import-") as scratch:
        spooled = Path(scratch) / "import.jsonl"
        with spooled.open("w", encoding="utf-8") as copy:
            shutil.copyfileobj(source, copy)
        yield spooled


def _lines(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed JSON or the JSONDecodeError)`` of every non-blank line after
    the header; the header is checked first."""
    with path.open("r", encoding="utf-8", errors="strict") as stream:
        try:
            for number, raw in enumerate(stream, start=1):
                if not raw.strip():
                    continue
                try:
                    value: Any = json.loads(raw)
                except json.JSONDecodeError as exc:
                    value = exc
                if number == 1:
                    if isinstance(value, json.JSONDecodeError):
                        raise ValidationError(f"line 1: invalid JSON: {value.msg}")
                    check_header(value)
                    continue
                yield number, value
        except UnicodeDecodeError as exc:
            raise ValidationError(
                f"{path} is not UTF-8 text: {exc.reason}", hint="Export files are UTF-8 JSONL."
            ) from None


def _parsed(path: Path) -> Iterator[ImportRecord | LineError]:
    for number, value in _lines(path):
        if isinstance(value, json.JSONDecodeError):
            yield LineError(number, f"invalid JSON: {value.msg} (column {value.colno})")
            continue
        try:
            yield parse_line(value, number)
        except MemoweaveError as exc:
            yield LineError(number, exc.message)


def _records(path: Path, skip: set[int]) -> Iterator[ImportRecord]:
    for item in _parsed(path):
        if isinstance(item, ImportRecord) and item.line not in skip:
            yield item


def _batches(records: Iterator[ImportRecord], size: int) -> Iterator[list[ImportRecord]]:
    batch: list[ImportRecord] = []
    for record in records:
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


# -- checking -----------------------------------------------------------------------------


def _check(memory: Any, path: Path, batch_size: int) -> _Checked:
    """Validate every line, find duplicate ids and ids owned by another scope."""
    checked = _Checked()
    first_line: dict[str, int] = {}
    pending: list[ImportRecord] = []
    for item in _parsed(path):
        if isinstance(item, LineError):
            checked.bad.append(item)
            continue
        if item.id in first_line:
            checked.bad.append(
                LineError(item.line, f"id {item.id} already appears on line {first_line[item.id]}")
            )
            continue
        first_line[item.id] = item.line
        if item.vector is not None and len(checked.samples) < SAMPLES:
            checked.samples.append((item.payload["memory"], item.vector))
        pending.append(item)
        if len(pending) >= batch_size:
            _check_owners(memory, pending, checked)
            pending = []
    if pending:
        _check_owners(memory, pending, checked)
    checked.bad.sort(key=lambda e: e.line)
    return checked


def _check_owners(memory: Any, records: list[ImportRecord], checked: _Checked) -> None:
    store = memory._providers.vector_store
    found = {r.id: r for r in store.get([r.id for r in records])}
    for record in records:
        existing = found.get(record.id)
        if existing is not None and _scope_of(existing) != record.scope:
            checked.bad.append(
                LineError(
                    record.line,
                    f"id {record.id} already belongs to another scope in the target store",
                )
            )
        else:
            checked.valid += 1


def _scope_of(record: StoredRecord) -> dict[str, str]:
    return {
        k: record.payload[k]
        for k in ("user_id", "agent_id", "run_id")
        if record.payload.get(k) is not None
    }


def _reusable_dims(memory: Any, samples: list[tuple[str, list[float]]]) -> int | None:
    """The length of the file's vectors if the target's embedder reproduces the samples
    (the same model), else ``None`` (every text is embedded again)."""
    if not samples:
        return None
    fresh = memory._providers.embedder.embed([t for t, _ in samples], purpose="document")
    same = all(
        len(new) == len(old) and _cosine(new, old) >= SAME_EMBEDDER_COSINE
        for new, (_, old) in zip(fresh, samples, strict=True)
    )
    return len(fresh[0]) if same else None


def _cosine(a: list[float], b: list[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


# -- writing ------------------------------------------------------------------------------


def _write_batch(
    memory: Any, batch: list[ImportRecord], reuse_dims: int | None, report: ImportReport
) -> None:
    """One journaled write for the records of ``batch`` that are not already stored."""
    providers = memory._providers
    store, history = providers.vector_store, providers.history
    existing = {r.id: r for r in store.get([r.id for r in batch], with_vectors=True)}
    known = history.existing_event_ids([e.id for r in batch for e in r.events])
    plan = WritePlan()
    to_embed: list[tuple[ImportRecord, StoredRecord | None]] = []
    for record in batch:
        before = existing.get(record.id)
        events = [e for e in record.events if e.id not in known]
        same_payload = before is not None and before.payload == record.payload
        if same_payload and not events:
            report.unchanged += 1
            continue
        plan.events.extend(events)
        report.events_added += len(events)
        if same_payload:
            continue
        vector, from_file = _kept_vector(record, before, reuse_dims)
        if vector is None:
            to_embed.append((record, before))
            continue
        report.vectors_reused += from_file
        _plan_upsert(plan, record, before, vector)
    if to_embed:
        texts = [record.payload["memory"] for record, _ in to_embed]
        vectors = providers.embedder.embed(texts, purpose="document")
        report.embedded += len(vectors)
        for (record, before), vector in zip(to_embed, vectors, strict=True):
            _plan_upsert(plan, record, before, vector)  # as made: it may be an EmbedText
    report.written += len(plan.upserts)
    indexes = providers.indexes
    if indexes is not None and plan.upserts:
        docs = [index_doc(r.id, r.payload) for r in plan.upserts]
        plan.on_commit.append(lambda conn: indexes.upsert(conn, docs))
    run(apply_plan(plan, store, history, iso(utcnow()), providers.graph_store))


def _kept_vector(
    record: ImportRecord, before: StoredRecord | None, reuse_dims: int | None
) -> tuple[list[float] | None, bool]:
    """``(vector, from_file)``: the file's vector (same embedder and dims), else the stored
    one when the text is unchanged (a re-run), else ``None`` (embed the text)."""
    if record.vector is not None and len(record.vector) == reuse_dims:
        return record.vector, True
    same_text = before is not None and before.payload.get("memory") == record.payload["memory"]
    if same_text and before is not None and before.vector:
        return list(before.vector), False
    return None, False


def _plan_upsert(
    plan: WritePlan, record: ImportRecord, before: StoredRecord | None, vector: list[float]
) -> None:
    plan.before[record.id] = before
    plan.upserts.append(VectorRecord(record.id, vector, record.payload))
