"""``memoweave doctor``: checks that a configuration's data is whole, one line per check.

These are the data checks; the provider checks (plugins installed, configuration,
reachable, dimensions, history writable and its schema) are
:mod:`memoweave.cli.provider_checks`, run first by the command.

Each check is one function decorated with :func:`check`; it receives the :class:`Doctor`
(the configuration, the providers built once, facts computed once) and returns a
:class:`Finding`: ``ok``, ``warn``, ``fail`` (with the fix), ``fixed`` (``--repair`` did
it) or ``skipped`` (an earlier check failed). A check that raises a ``MemoweaveError`` is
a ``fail`` with the error's hint as the fix. Adding a check is adding a function::

    @check("my provider")
    def _my_provider(doctor: Doctor) -> Finding:
        ...
        return Finding.ok("my provider", "reachable")

Checks run in the order they are defined; the doctor never deletes a memory (see
:mod:`memoweave.memory.repair` for what ``--repair`` adds).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from memoweave.errors import MemoweaveError, VectorStoreError
from memoweave.memory.consistency import RESET_MARKER, reset_all, stored_memory_count
from memoweave.memory.repair import rebuild_history, reembed_from_history, reindex
from memoweave.memory.transaction import recover
from memoweave.memory.wiring import MemoryProviders, build_providers, coerce_config
from memoweave.providers.vector_store import StoredRecord
from memoweave.runtime.steps import run

Status = Literal["ok", "warn", "fail", "fixed", "skipped"]
REPAIR = "run `memoweave doctor --repair`"


@dataclass(frozen=True)
class Finding:
    """The result of one check: what was found and, when it is not ok, the fix."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    @classmethod
    def ok(cls, name: str, detail: str) -> Finding:
        return cls(name, "ok", detail)

    def to_dict(self) -> dict[str, str]:
        return {"check": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}


class Unavailable(Exception):
    """What a check needs could not be built; the check is skipped."""


class Doctor:
    """What the checks share; providers and facts are built on first use, once."""

    def __init__(self, config: Any = None, *, repair: bool = False, **overrides: Any) -> None:
        self.repair = repair
        self._config_input = config
        self._overrides = overrides
        self._built: dict[str, Any] = {}
        self.bound = False

    def _once(self, what: str, build: Callable[[], Any]) -> Any:
        """``build()`` the first time; later calls reuse it. A failure makes every check
        that needs it a skip (the provider checks report the failure itself)."""
        if what not in self._built:
            try:
                self._built[what] = build()
            except MemoweaveError as exc:
                self._built[what] = Unavailable(f"the {what} did not start: {exc.message}")
        built = self._built[what]
        if isinstance(built, Unavailable):
            raise built
        return built

    @property
    def config(self) -> Any:
        return self._once("configuration", lambda: coerce_config(self._config_input))

    @property
    def providers(self) -> MemoryProviders:
        built: MemoryProviders = self._once(
            "providers", lambda: build_providers(self.config, **self._overrides)
        )
        return built

    @property
    def collection(self) -> str:
        return str(self.config.collection_name)

    def need_store(self) -> MemoryProviders:
        """The providers with the collection bound, or :class:`Unavailable`."""
        if not self.bound:
            raise Unavailable("the collection could not be opened")
        return self.providers

    @cached_property
    def stored(self) -> dict[str, StoredRecord]:
        """Every record of the collection, by id (paged)."""
        store = self.need_store().vector_store
        records: dict[str, StoredRecord] = {}
        cursor = None
        while True:
            page = store.list(limit=500, cursor=cursor)
            records.update((r.id, r) for r in page.records)
            cursor = page.next_cursor
            if cursor is None:
                return records

    def close(self) -> None:
        if isinstance(self._built.get("providers"), MemoryProviders):
            self.providers.close()


Check = Callable[[Doctor], Finding]
CHECKS: list[tuple[str, Check]] = []


def check(name: str) -> Callable[[Check], Check]:
    """Register a check under ``name`` (shown at the start of its line)."""

    def register(fn: Check) -> Check:
        CHECKS.append((name, fn))
        return fn

    return register


def run_doctor(config: Any = None, *, repair: bool = False, **overrides: Any) -> list[Finding]:
    """Run every registered check in order; ``repair=True`` fixes what can be fixed."""
    doctor = Doctor(config, repair=repair, **overrides)
    findings: list[Finding] = []
    try:
        for name, fn in CHECKS:
            try:
                findings.append(fn(doctor))
            except Unavailable as why:
                findings.append(Finding(name, "skipped", str(why)))
            except MemoweaveError as exc:
                findings.append(Finding(name, "fail", exc.message, exc.hint))
    finally:
        doctor.close()
    return findings


# -- the checks ------------------------------------------------------------------------


@check("collection")
def _collection(doctor: Doctor) -> Finding:
    p, name = doctor.providers, doctor.collection
    dims = p.embedder.dims or len(p.embedder.embed(["dimension probe"], purpose="document")[0])
    try:
        p.vector_store.ensure_collection(name, dims, "cosine")
    except VectorStoreError as exc:
        if not exc.details.get("repair"):
            raise
        if not doctor.repair:
            return Finding("collection", "fail", exc.message, REPAIR)
        repaired = p.vector_store.repair_collection(name)
        p.vector_store.ensure_collection(name, dims, "cosine")
        doctor.bound = True
        return Finding("collection", "fixed", "; ".join(repaired) or "reopened")
    doctor.bound = True
    return Finding.ok("collection", f"{name!r} opens ({dims} dimensions)")


@check("interrupted reset")
def _interrupted_reset(doctor: Doctor) -> Finding:
    p = doctor.need_store()
    began = p.history.meta(RESET_MARKER)
    if began is None:
        return Finding.ok("interrupted reset", "none")
    if not doctor.repair:
        return Finding(
            "interrupted reset", "fail", f"a reset began at {began} and did not finish",
            f"{REPAIR} (or open the memory: it finishes the reset)",
        )  # fmt: skip
    run(reset_all(p))
    doctor.__dict__.pop("stored", None)
    return Finding("interrupted reset", "fixed", f"finished the reset begun at {began}")


@check("write journal")
def _write_journal(doctor: Doctor) -> Finding:
    p = doctor.need_store()
    pending = p.history.pending_journal()
    if not pending:
        return Finding.ok("write journal", "no write left half-done")
    if not doctor.repair:
        return Finding(
            "write journal", "fail", f"{len(pending)} writes were left half-done by a crash",
            f"{REPAIR} (or open the memory: it rolls them back)",
        )  # fmt: skip
    rolled = run(recover(p.vector_store, p.history, p.graph_store))
    doctor.__dict__.pop("stored", None)
    return Finding("write journal", "fixed", f"rolled back {rolled} half-done writes")


@check("store and history")
def _store_and_history(doctor: Doctor) -> Finding:
    p = doctor.need_store()
    name = "store and history"
    collections = p.history.bind_collection(doctor.collection) - {doctor.collection}
    if collections:
        return Finding(
            name, "warn", f"the history is shared with collection(s) {sorted(collections)}; "
            "counts cannot be compared", "give each collection its own history_db_path",
        )  # fmt: skip
    kept = {i for i, r in doctor.stored.items() if r.payload.get("status") != "deleted"}
    live = p.history.live_memory_ids()
    no_history = sorted(kept - live)
    lost = sorted(live - set(doctor.stored))
    if not no_history and not lost:
        count = stored_memory_count(p.vector_store)
        return Finding.ok(name, f"{count} memories on both sides")
    detail = (
        f"{len(no_history)} stored memories have no history; "
        f"{len(lost)} memories in the history are missing from the store"
    )
    if not doctor.repair:
        return Finding(name, "fail", detail, f"{REPAIR} (missing store records are re-embedded "
                       "from the history; their metadata is lost)")  # fmt: skip
    rebuilt = rebuild_history(p.history, p.indexes, [doctor.stored[i] for i in no_history])
    restored = reembed_from_history(p.vector_store, p.embedder, p.history, p.indexes, lost)
    doctor.__dict__.pop("stored", None)
    return Finding(
        name, "fixed", f"{detail}: wrote {rebuilt} history rows, re-embedded {restored} memories"
    )


@check("keyword index")
def _keyword_index(doctor: Doctor) -> Finding:
    p = doctor.need_store()
    if p.indexes is None or p.indexes.keyword is None:
        return Finding.ok("keyword index", "kept by the store")
    indexed = p.indexes.keyword.indexed_ids()
    missing = [r for i, r in doctor.stored.items() if i not in indexed]
    if not missing:
        return Finding.ok("keyword index", f"{len(indexed)} memories indexed")
    detail = f"{len(missing)} stored memories are not in the keyword and entity indexes"
    if not doctor.repair:
        return Finding("keyword index", "fail", detail, REPAIR)
    return Finding(
        "keyword index", "fixed", f"{detail}: indexed {reindex(p.indexes, p.history, missing)}"
    )


__all__ = ["CHECKS", "Doctor", "Finding", "check", "run_doctor"]
