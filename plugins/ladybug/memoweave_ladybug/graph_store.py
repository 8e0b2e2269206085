"""The LadybugDB graph store: the core's Cypher graph store run on an embedded engine.

Each graph ``g`` is a node table ``g_entity`` (primary key ``key``) and a relationship
table ``g_rel`` in one database file (see :mod:`memoweave.providers.graph_cypher` for the
data model). Every contract call that writes runs in one engine transaction, rolled back
on any failure, so a rejected or failed call leaves the graph as it was. One connection
per store, serialised by the base class's lock; the engine locks the file, so a second
process opening the same path gets a ``GraphStoreError`` saying so.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memoweave.errors import GraphStoreError
from memoweave.providers.cypher_store import CypherGraphStore
from memoweave.providers.graph_cypher import CypherGraph, Statement, kuzu_double
from memoweave.providers.graph_store import GraphStoreCapabilities
from memoweave_ladybug.config import LadybugConfig

_MIB = 1024 * 1024


def _engine_error(action: str, exc: Exception) -> GraphStoreError:
    message = str(exc).strip() or type(exc).__name__
    hint = None
    if "lock" in message.lower():
        hint = "Another process has this database open; give each process its own path."
    return GraphStoreError(f"LadybugDB {action} failed: {message}", hint=hint)


class LadybugGraphStore(CypherGraphStore):
    """Graph store on an embedded LadybugDB database."""

    ENGINE = "ladybug"
    """The engine module (the Kuzu API); the engine benchmark swaps in ``kuzu``."""

    def __init__(self, config: LadybugConfig) -> None:
        super().__init__()
        engine = importlib.import_module(self.ENGINE)
        path = config.path
        self.capabilities = GraphStoreCapabilities(persistent=path is not None)
        try:
            if path is not None:
                Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self._db = engine.Database(
                None if path is None else str(Path(path).expanduser()),
                buffer_pool_size=config.buffer_pool_mb * _MIB,
                max_num_threads=config.max_threads,
            )
            self._conn = engine.Connection(self._db, num_threads=config.max_threads)
        except Exception as exc:
            raise _engine_error(f"opening {path or 'an in-memory database'}", exc) from exc
        self._closed = False

    def _open_graph(self, name: str) -> CypherGraph:
        graph = CypherGraph(name, to_double=kuzu_double)
        scope = "user_id STRING, agent_id STRING, run_id STRING"
        self._write(
            [
                (
                    f"CREATE NODE TABLE IF NOT EXISTS {graph.node}(key STRING PRIMARY KEY, "
                    f"name STRING, {scope}, entity_type STRING)",
                    {},
                ),
                (
                    f"CREATE REL TABLE IF NOT EXISTS {graph.edge}(FROM {graph.node} TO "
                    f"{graph.node}, id STRING, relationship STRING, memory_id STRING, {scope}, "
                    "valid_from DOUBLE, valid_until DOUBLE, superseded_by STRING)",
                    {},
                ),
            ]
        )
        return graph

    def _execute(self, statement: Statement) -> list[list[Any]]:
        text, params = statement
        result = self._conn.execute(text, params)
        try:
            return [list(row) for row in result.get_all()]
        finally:
            result.close()

    def _read(self, statement: Statement) -> list[list[Any]]:
        self._check_open()
        try:
            return self._execute(statement)
        except Exception as exc:
            raise _engine_error("query", exc) from exc

    def _write(self, statements: Sequence[Statement]) -> list[list[list[Any]]]:
        self._check_open()
        try:
            self._conn.execute("BEGIN TRANSACTION")
        except Exception as exc:
            raise _engine_error("starting a transaction", exc) from exc
        try:
            out = [self._execute(s) for s in statements]
            self._conn.execute("COMMIT")
        except Exception as exc:
            with contextlib.suppress(Exception):  # the original error is the one to report
                self._conn.execute("ROLLBACK")
            raise _engine_error("write", exc) from exc
        return out

    def _check_open(self) -> None:
        if self._closed:
            raise GraphStoreError("the LadybugDB graph store is closed", hint="Open a new one.")

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for handle in (self._conn, self._db):
                with contextlib.suppress(Exception):  # best effort, never raises
                    handle.close()
