"""``memoweave import --from-mem0`` on data written by a real mem0 2.2.1 (the fixture in
tests/fixtures/mem0, made by its make_mem0_fixture.py): Qdrant local with mem0's SQLite
history into the core store with the real ONNX embedder, and Upstash (mem0's
enable_embeddings, on the emulator) into the translated mem0 configuration."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memoweave import Memory
from memoweave.cli.main import main
from memoweave.errors import ConfigError, VectorStoreError
from memoweave.plugins import load_registry
from memoweave.testing.doubles import HashingEmbedder
from memoweave.transfer.mem0 import import_mem0

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "mem0"
EXPECTED = json.loads((FIXTURE / "expected.json").read_text())


def _installed(kind: str, name: str) -> None:
    if name not in load_registry().names(kind):
        pytest.skip(f"the {name} plugin is not installed")


def _memoweave_view(memory: Memory) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for scope in EXPECTED["qdrant"]["get_all"]:
        items = memory.get_all(filters=json.loads(scope), top_k=100)["results"]
        out[scope] = sorted(items, key=lambda m: m["memory"])
    return out


def _check_against_mem0(memory: Memory, expected: dict[str, Any]) -> None:
    """Every memory mem0 lists is there with its text, scope, metadata, times, history."""
    view = _memoweave_view(memory)
    for scope, mem0_items in expected["get_all"].items():
        ours = view[scope]
        assert [m["memory"] for m in ours] == sorted(m["memory"] for m in mem0_items)
        for theirs in mem0_items:
            mine = next(m for m in ours if m["id"] == theirs["id"])
            for key in ("user_id", "agent_id", "run_id"):
                assert mine.get(key) == theirs.get(key)
            assert mine["metadata"] == (theirs.get("metadata") or {})
            assert mine["created_at"] == theirs["created_at"]
            if theirs["updated_at"] != theirs["created_at"]:
                assert mine["updated_at"] == theirs["updated_at"]
            if theirs.get("expiration_date"):
                assert mine["expiration_date"].startswith(theirs["expiration_date"])
            events = memory.history(theirs["id"])
            assert [e["event"] for e in events] == [
                e["event"] for e in expected["history"][theirs["id"]]
            ]
            assert [e["new_memory"] for e in events] == [
                e["new_memory"] for e in expected["history"][theirs["id"]]
            ]
    assert memory.get(expected["deleted_id"]) is None


def test_qdrant_and_history_of_a_real_mem0(tmp_path: Path) -> None:
    _installed("embedder", "onnx")
    shutil.copytree(FIXTURE / "qdrant", tmp_path / "qdrant")
    shutil.copy(FIXTURE / "history.db", tmp_path / "history.db")
    mem0 = tmp_path / "mem0.json"
    mem0.write_text(
        json.dumps(
            {
                "vector_store": {
                    "provider": "qdrant",
                    "config": {"path": str(tmp_path / "qdrant"), "collection_name": "mem0"},
                },
                "history_db_path": str(tmp_path / "history.db"),
            }
        )
    )
    target = tmp_path / "memoweave.yaml"
    store, history = json.dumps(str(tmp_path / "store")), json.dumps(str(tmp_path / "mw.db"))
    target.write_text(
        f"vector_store: {{provider: memory, config: {{path: {store}}}}}\n"
        f"embedder: {{provider: onnx}}\nhistory_db_path: {history}\n"
    )
    args = ["import", "--from-mem0", str(mem0), "--config", str(target), "--json"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    assert (summary["mem0_memories"], summary["written"], summary["invalid"]) == (4, 4, 0)
    assert (summary["vectors_reused"], summary["embedded"]) == (4, 0)  # same MiniLM
    assert summary["mem0_history_rows"] == 5
    assert summary["history_rows_of_deleted_memories"] == 2
    again = json.loads(CliRunner().invoke(main, args).stdout)
    assert (again["written"], again["unchanged"], again["events_added"]) == (0, 4, 0)
    plain = CliRunner().invoke(main, args[:-1])
    assert plain.exit_code == 0 and "4 memories with 5 history rows" in plain.stdout
    with Memory(str(target)) as memory:
        _check_against_mem0(memory, EXPECTED["qdrant"])
        hits = memory.search("When did she move to Berlin?", user_id="maya", top_k=1)
        assert hits["results"][0]["memory"] == "Moved to Berlin in May 2024"


def test_milvus_lite_of_a_real_mem0(tmp_path: Path) -> None:
    _installed("vector_store", "milvus")
    shutil.copytree(FIXTURE / "milvus", tmp_path / "milvus")
    shutil.copy(FIXTURE / "milvus-history.db", tmp_path / "history.db")
    mem0 = {
        "vector_store": {
            "provider": "milvus",
            "config": {"url": str(tmp_path / "milvus" / "mem0.db"), "collection_name": "mem0"},
        },
        "history_db_path": str(tmp_path / "history.db"),
    }
    memory = Memory(
        {"vector_store": {"provider": "memory"}, "history_db_path": str(tmp_path / "mw.db")},
        embedder=HashingEmbedder(16),  # another embedder: every text is embedded again
    )
    with memory:
        report = import_mem0(memory, mem0).as_dict()
        assert (report["written"], report["embedded"], report["vectors_reused"]) == (4, 4, 0)
        _check_against_mem0(memory, EXPECTED["milvus"])


def test_upstash_of_a_real_mem0_into_the_translated_config(tmp_path: Path) -> None:
    _installed("vector_store", "upstash")
    from memoweave_upstash.emulator import UpstashEmulator
    from memoweave_upstash.emulator.store import BUILTIN_MODEL

    shutil.copy(FIXTURE / "upstash-history.db", tmp_path / "history.db")
    dump = json.loads((FIXTURE / "upstash.json").read_text())
    with UpstashEmulator(dims=384, embedding_model=BUILTIN_MODEL) as emu:
        for namespace, items in dump.items():
            emu.index.upsert(namespace, items)
        mem0 = {
            "vector_store": {
                "provider": "upstash_vector",
                "config": {
                    "url": emu.url,
                    "token": emu.token,
                    "collection_name": "mem0",
                    "enable_embeddings": True,
                },
            },
            "llm": {"provider": "openai", "config": {"openai_base_url": "http://127.0.0.1:9/v1"}},
            "history_db_path": str(tmp_path / "history.db"),
        }
        with Memory.from_config(mem0) as memory:
            report = import_mem0(memory, mem0).as_dict()
            assert (report["written"], report["embedded"], report["vectors_reused"]) == (4, 4, 0)
            assert report["target_collection"] == "mem0_memoweave"
            _check_against_mem0(memory, EXPECTED["upstash"])
            hits = memory.search("green tea", user_id="bob", top_k=1)["results"]
            assert hits[0]["memory"] == "I like green tea"
        assert "upsert-data" in emu.requests  # the index embedded the texts itself
        assert len(emu.index.fetch("mem0", {"prefix": ""})) == 4  # mem0's data untouched


def test_bad_mem0_sources_are_typed_errors(tmp_path: Path) -> None:
    _installed("vector_store", "qdrant")
    memory = Memory(
        {"vector_store": {"provider": "memory"}, "history_db_path": str(tmp_path / "h.db")},
        embedder=HashingEmbedder(8),
    )
    with memory:
        with pytest.raises(ConfigError, match="reads mem0's 'chroma'"):
            import_mem0(memory, {"vector_store": {"provider": "chroma", "config": {}}})
        with pytest.raises(VectorStoreError, match="no collection 'nope'"):
            import_mem0(
                memory,
                {
                    "vector_store": {
                        "provider": "qdrant",
                        "config": {"path": str(tmp_path / "q"), "collection_name": "nope"},
                    }
                },
            )
    bad = tmp_path / "mem0.yaml"
    bad.write_text("- not a mapping\n")
    result = CliRunner().invoke(main, ["import", "--from-mem0", str(bad)])
    assert result.exit_code == 2 and "error[config_error]" in result.stderr


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".py"])
def test_mem0_config_files(tmp_path: Path, suffix: str) -> None:
    from memoweave.transfer.mem0 import load_mem0_config

    config = {"vector_store": {"provider": "qdrant", "config": {"path": "/p"}}, "version": "v1.1"}
    file = tmp_path / f"mem0{suffix}"
    if suffix == ".py":
        file.write_text(f"config = {config!r}\n")
    else:
        file.write_text(json.dumps(config))  # JSON is YAML too
    assert load_mem0_config(file) == config
    file.write_text("config = 3\n" if suffix == ".py" else "[1, 2]")
    with pytest.raises(ConfigError, match="not a mapping"):
        load_mem0_config(file)
