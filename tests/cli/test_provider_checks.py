"""The provider checks of ``memoweave doctor`` on real providers: the core's persistent
``memory`` store, the real ``onnx`` embedder and the Upstash emulator."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memoweave import Memory
from memoweave.cli.provider_checks import provider_checks
from memoweave.config import MemoryConfig
from memoweave.memory.history_schema import SCHEMA_VERSION
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.helpers import closed_port_url


def _config(tmp_path: Path, **sections: Any) -> MemoryConfig:
    return MemoryConfig.from_dict(
        {
            "vector_store": {"provider": "memory", "config": {"path": str(tmp_path / "store")}},
            "embedder": {"provider": "onnx"},
            "history_db_path": str(tmp_path / "history.db"),
            **sections,
        }
    )


def _by_name(checks: list[Any]) -> dict[str, Any]:
    return {c.name: c for c in checks}


def test_a_healthy_configuration(tmp_path: Path, cli_onnx_available: None) -> None:
    config = _config(tmp_path)
    checks = provider_checks(config)
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]
    names = _by_name(checks)
    assert "vector_store memory: plugin installed" in names
    assert "embedder onnx: starts (server reachable)" in names
    assert (
        "does not exist yet"
        in names["collection 'memoweave': dimensions agree with the embedder"].detail
    )
    with Memory(config) as memory:
        memory.add("I live in Lisbon", user_id="u", infer=False)
    checks = _by_name(provider_checks(config))
    assert checks["collection 'memoweave': dimensions agree with the embedder"].detail == (
        "384 dimensions, cosine"
    )
    assert (
        f"version {SCHEMA_VERSION}" in checks[f"history {tmp_path / 'history.db'}: schema"].detail
    )


def test_the_late_interaction_section_is_checked_as_a_reranker(
    tmp_path: Path, cli_onnx_available: None
) -> None:
    late = "late_interaction: scores are similarities, the reranker's are not"
    checks = _by_name(
        provider_checks(_config(tmp_path, late_interaction={"provider": "onnx-colbert"}))
    )
    assert checks["late_interaction onnx-colbert: starts (server reachable)"].ok
    missing = _by_name(provider_checks(_config(tmp_path, late_interaction={"provider": "nosuch"})))
    assert not missing["late_interaction nosuch: plugin installed"].ok
    assert checks[late].ok
    wrong = _by_name(provider_checks(_config(tmp_path, late_interaction={"provider": "onnx"})))
    assert wrong["late_interaction onnx: starts (server reachable)"].ok
    assert not wrong[late].ok  # opening would refuse it
    assert "onnx-colbert" in (wrong[late].fix or "")
    both = {"provider": "onnx-colbert"}
    twice = _by_name(provider_checks(_config(tmp_path, late_interaction=both, reranker=both)))
    assert not twice[late].ok and "cross-encoder" in (twice[late].fix or "")


def test_failures_name_their_fix(tmp_path: Path, cli_onnx_available: None) -> None:
    made = InMemoryVectorStore({"path": str(tmp_path / "store")})
    made.ensure_collection("memoweave", 64)
    made.close()
    history = tmp_path / "history.db"
    with sqlite3.connect(history) as conn:
        conn.execute("PRAGMA user_version = 99")
    checks = provider_checks(_config(tmp_path, llm={"provider": "nosuch"}))
    failed = {c.name: c for c in checks if not c.ok}
    assert set(failed) == {
        "llm nosuch: plugin installed",
        "collection 'memoweave': dimensions agree with the embedder",
        f"history {history}: schema",
    }
    assert "pip install memoweave-nosuch" in failed["llm nosuch: plugin installed"].fix
    assert "pip install ./plugins/nosuch" in failed["llm nosuch: plugin installed"].fix
    dims = failed["collection 'memoweave': dimensions agree with the embedder"]
    assert "64 dimensions, the embedder makes 384" in dims.detail and "export" in dims.fix
    assert "Upgrade memoweave" in failed[f"history {history}: schema"].fix
    bad = provider_checks(
        _config(tmp_path, vector_store={"provider": "memory", "config": {"colour": 1}})
    )
    (problem,) = [c for c in bad if not c.ok and "configuration" in c.name]
    assert "colour" in problem.detail


def test_an_unreachable_server(tmp_path: Path, cli_onnx_available: None) -> None:
    pytest.importorskip("memoweave_upstash")
    store = {
        "provider": "upstash",
        "config": {"url": closed_port_url(), "token": "t", "retries": 0},
    }
    checks = provider_checks(_config(tmp_path, vector_store=store))
    (failed,) = [c for c in checks if not c.ok]
    assert failed.name == "collection 'memoweave': dimensions agree with the embedder"
    assert failed.fix
