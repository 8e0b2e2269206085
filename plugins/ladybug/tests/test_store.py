"""LadybugDB specifics: configuration, lazy import, transactions, the file lock."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memoweave.errors import ConfigError, GraphStoreError
from memoweave.plugins import load_registry
from memoweave.providers.graph_cypher import CypherGraph
from memoweave.providers.graph_store import GraphEntity, GraphRelation

SCOPE = {"user_id": "alice"}


def _relation(i: int) -> GraphRelation:
    return GraphRelation(f"r{i}", SCOPE, "alice", "knows", f"friend {i}", f"m{i}")


def test_config_is_validated() -> None:
    registry = load_registry()
    with pytest.raises(ConfigError, match="buffer_pool_mb"):
        registry.create("graph_store", "ladybug", {"buffer_pool_mb": 1})
    with pytest.raises(ConfigError, match="pth"):
        registry.create("graph_store", "ladybug", {"pth": "/tmp/x"})


def test_registration_does_not_import_the_engine() -> None:
    code = (
        "import sys; from memoweave.plugins import load_registry; "
        "r = load_registry(allow=['ladybug']); "
        "assert 'ladybug' in r.names('graph_store'); "
        "print('ladybug' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_failed_write_rolls_back_the_whole_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The relations of a call are not kept when a later statement of it fails."""
    store = load_registry().create("graph_store", "ladybug", {"path": str(tmp_path / "db")})
    try:
        store.ensure_graph("g")
        store.upsert(relations=[_relation(0)])
        monkeypatch.setattr(
            CypherGraph, "upsert_entities", lambda self, ents: ("THIS IS NOT CYPHER", {})
        )
        with pytest.raises(GraphStoreError, match="write failed"):
            store.upsert(relations=[_relation(1)], entities=[GraphEntity("alice", SCOPE, "p")])
        monkeypatch.undo()
        assert [r.id for r in store.relations(SCOPE)] == ["r0"]
        assert {e.name for e in store.entities(SCOPE)} == {"alice", "friend 0"}
        store.upsert(relations=[_relation(2)])
        assert store.count() == 2
    finally:
        store.close()


def test_a_second_process_on_the_same_file_gets_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "db"
    store = load_registry().create("graph_store", "ladybug", {"path": str(path)})
    try:
        store.ensure_graph("g")
        store.upsert(relations=[_relation(0)])
        code = textwrap.dedent(
            f"""
            from memoweave.errors import GraphStoreError
            from memoweave.plugins import load_registry
            try:
                load_registry().create("graph_store", "ladybug", {{"path": {str(path)!r}}})
            except GraphStoreError as exc:
                print("typed:", exc.hint)
            """
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("typed: Another process"), out.stdout
    finally:
        store.close()


def test_closed_store_raises_a_typed_error(tmp_path: Path) -> None:
    store = load_registry().create("graph_store", "ladybug", {"path": str(tmp_path / "db")})
    store.ensure_graph("g")
    store.close()
    with pytest.raises(GraphStoreError, match="closed"):
        store.count()
