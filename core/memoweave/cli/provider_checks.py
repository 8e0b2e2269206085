"""The provider checks of ``memoweave doctor``: one :class:`Check` per question, each
with the fix for a failure, and nothing written.

For every configured provider (and the embedded defaults): is its plugin installed, does
its configuration validate, does it start (a server-backed store connects); does the
embedder produce vectors, and do their dimensions agree with the existing collection; is
the history's folder writable and its schema version one this memoweave reads.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoweave.config import MemoryConfig
from memoweave.config.models import PROVIDER_KINDS
from memoweave.errors import ConfigError, MemoweaveError, ProviderNotFound
from memoweave.memory.defaults import (
    default_embedder,
    default_history_path,
    default_stack_missing,
    default_vector_store,
)
from memoweave.memory.history_schema import SCHEMA_VERSION
from memoweave.memory.wiring import check_late_interaction


@dataclass(frozen=True)
class Check:
    """One line of the report: what was checked, whether it passed, and the fix."""

    name: str
    ok: bool
    detail: str = ""
    fix: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


def provider_checks(config: MemoryConfig, registry: Any = None) -> list[Check]:
    """Run every check on ``config`` (the providers are started, then closed)."""
    if registry is None:
        from memoweave.plugins import load_registry

        registry = load_registry()
    checks: list[Check] = []
    specs = {  # the store and the embedder first, as they start
        "vector_store": config.vector_store or default_vector_store(),
        "embedder": config.embedder or default_embedder(),
    }
    specs.update({s: getattr(config, s) for s in PROVIDER_KINDS if s not in specs})
    defaults = {k for k in ("vector_store", "embedder") if getattr(config, k) is None}
    with _started(registry, specs, defaults, checks) as made:
        store, embedder = made.get("vector_store"), made.get("embedder")
        if store is not None and store.capabilities.embeds_text:
            embedder = None  # the store embeds the text itself
            checks.append(Check("embedder: the store embeds the text itself", True))
        _late_interaction_check(made.get("late_interaction"), made.get("reranker"), checks)
        dims = _dims_check(embedder, store, checks)
        if store is not None and dims is not None:
            checks.append(_collection_check(store, config.collection_name, dims))
    checks.extend(_history_checks(Path(config.history_db_path or default_history_path())))
    return checks


@contextlib.contextmanager
def _started(
    registry: Any, specs: dict[str, Any], defaults: set[str], checks: list[Check]
) -> Iterator[dict[str, Any]]:
    made: dict[str, Any] = {}
    try:
        for kind, spec in specs.items():
            if spec is None:
                continue
            label = f"{kind} {spec.provider}"
            provider = _start(registry, PROVIDER_KINDS[kind], spec, label, kind in defaults, checks)
            if provider is not None:
                made[kind] = provider
        yield made
    finally:
        for provider in made.values():
            with contextlib.suppress(Exception):
                provider.close()


def _start(
    registry: Any, kind: str, spec: Any, label: str, default: bool, checks: list[Check]
) -> Any:
    try:
        info = registry.info(kind, spec.provider)
    except ProviderNotFound as exc:
        error = default_stack_missing(exc) if default else exc
        checks.append(Check(f"{label}: plugin installed", False, exc.message, error.hint))
        return None
    except MemoweaveError as exc:
        checks.append(Check(f"{label}: plugin installed", False, exc.message, exc.hint))
        return None
    checks.append(Check(f"{label}: plugin installed", True, info.source))
    try:
        registry.validate_config(kind, spec.provider, spec.config)
    except MemoweaveError as exc:
        checks.append(Check(f"{label}: configuration", False, exc.message, exc.hint))
        return None
    checks.append(Check(f"{label}: configuration", True))
    try:
        provider = registry.create(kind, spec.provider, spec.config)
    except MemoweaveError as exc:
        checks.append(Check(f"{label}: starts (server reachable)", False, exc.message, exc.hint))
        return None
    checks.append(Check(f"{label}: starts (server reachable)", True))
    return provider


def _late_interaction_check(provider: Any, reranker: Any, checks: list[Check]) -> None:
    """That the ``late_interaction`` provider scores similarities and the reranker beside
    it does not, as opening requires."""
    if provider is None:
        return
    label = "late_interaction: scores are similarities, the reranker's are not"
    try:
        check_late_interaction(provider, reranker)
    except ConfigError as exc:
        checks.append(Check(label, False, exc.message, exc.hint))
        return
    checks.append(Check(label, True))


def _dims_check(embedder: Any, store: Any, checks: list[Check]) -> int | None:
    """The embedding length (one probe text embedded), or ``None`` when unknown."""
    if store is not None and store.capabilities.embeds_text:
        try:
            return int(store.text_dims())
        except MemoweaveError as exc:
            checks.append(Check("vector_store: embedding dimensions", False, exc.message, exc.hint))
            return None
    if embedder is None:
        return None
    try:
        dims = len(embedder.embed(["memoweave doctor probe"], purpose="document")[0])
    except MemoweaveError as exc:
        checks.append(Check("embedder: embeds a text", False, exc.message, exc.hint))
        return None
    checks.append(Check("embedder: embeds a text", True, f"{dims} dimensions"))
    return dims


def _collection_check(store: Any, name: str, dims: int) -> Check:
    label = f"collection {name!r}: dimensions agree with the embedder"
    try:
        found = store.describe_collection(name)
    except NotImplementedError:
        return Check(label, True, "not checked: the store cannot describe its collections")
    except MemoweaveError as exc:
        return Check(label, False, exc.message, exc.hint)
    if found is None:
        return Check(label, True, "the collection does not exist yet (made on first use)")
    if found[0] != dims:
        return Check(
            label,
            False,
            f"the collection has {found[0]} dimensions, the embedder makes {dims}",
            "Configure the embedder the collection was made with, or another "
            "collection_name (memoweave export, then import into it, re-embeds).",
        )
    return Check(label, True, f"{dims} dimensions, {found[1]}")


def _history_checks(path: Path) -> list[Check]:
    folder = path.parent if path.parent.exists() else _existing_parent(path)
    writable = os.access(folder, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))
    checks = [
        Check(
            f"history {path}: writable",
            writable,
            "" if writable else f"no write permission on {path if path.exists() else folder}",
            None if writable else "Fix the permissions or set history_db_path elsewhere.",
        )
    ]
    if not path.exists():
        checks.append(Check(f"history {path}: schema", True, "a new database (made on first use)"))
        return checks
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.Error as exc:
        checks.append(
            Check(
                f"history {path}: schema",
                False,
                f"not a readable SQLite database: {exc}",
                "Point history_db_path at memoweave's history database, or a new path.",
            )
        )
        return checks
    ok = version <= SCHEMA_VERSION
    checks.append(
        Check(
            f"history {path}: schema",
            ok,
            f"version {version} (this memoweave reads up to {SCHEMA_VERSION}; older ones are "
            "migrated on open)",
            None if ok else "Upgrade memoweave: a newer release wrote this history.",
        )
    )
    return checks


def _existing_parent(path: Path) -> Path:
    for parent in path.parents:
        if parent.exists():
            return parent
    return Path("/")
