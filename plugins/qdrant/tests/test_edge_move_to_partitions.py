"""Moving a single-shard home (created before partitions) to a partitioned one with
``memoweave export --with-vectors`` and ``memoweave import``, the procedure the README's
"Partitions" section gives: every stored memory (superseded ones included) keeps its id,
text, scope, vector and history; searches give the same results; the old home is
untouched. A memory deleted for good is not moved: its history stays in the old home."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memoweave_qdrant.edge_layout import part_name
from memoweave_qdrant.edge_routing import partition_of

from memoweave.memory import Memory
from memoweave.testing.doubles import HashingEmbedder
from memoweave.transfer import export_jsonl, import_jsonl

USERS = [f"user-{i}" for i in range(6)]
TOPICS = ["tea", "chess", "cycling", "Lisbon", "violin", "sourdough"]


def _config(root: Path, partitions: int) -> dict[str, Any]:
    store = {"path": str(root / "edge"), "partitions": partitions}
    return {
        "history_db_path": str(root / "history.db"),
        "vector_store": {"provider": "qdrant", "config": store},
    }


def _memory(root: Path, partitions: int) -> Memory:
    return Memory(_config(root, partitions), embedder=HashingEmbedder(dims=32))


def _snapshot(memory: Memory) -> dict[str, Any]:
    """Per user: every memory (superseded included) by id, and the ids a search returns."""
    state: dict[str, Any] = {}
    for user in USERS:
        page = memory.get_all(user_id=user, top_k=100, include_superseded=True)["results"]
        rows = {r["id"]: (r["memory"], r["user_id"]) for r in page}
        found = memory.search("tea chess cycling", user_id=user, top_k=5)["results"]
        state[user] = (rows, [r["id"] for r in found])
    return state


def _shard_folders(root: Path) -> set[str]:
    collection = next(p for p in (root / "edge").iterdir() if p.is_dir())
    return {p.name for p in collection.iterdir() if p.name.startswith("shard")}


def test_export_and_import_move_a_single_shard_home_to_partitions(tmp_path: Path) -> None:
    old_root, new_root = tmp_path / "old", tmp_path / "new"
    with _memory(old_root, 1) as old:
        ids: dict[str, list[str]] = {}
        for user in USERS:
            for topic in TOPICS:
                added = old.add(f"{user} likes {topic}", user_id=user, infer=False)
                ids.setdefault(user, []).append(added["results"][0]["id"])
        updated, deleted = ids[USERS[1]][0], ids[USERS[2]][1]
        old.update(updated, "user-1 now prefers green tea")
        old.delete(deleted)
        before = _snapshot(old)
        history_before = old.history(updated)
        with (tmp_path / "home.jsonl").open("w", encoding="utf-8") as out:
            exported = export_jsonl(old, out, with_vectors=True)
    assert _shard_folders(old_root) == {"shard"}  # the old layout: one shard

    with _memory(new_root, 8) as new:
        report = import_jsonl(new, tmp_path / "home.jsonl")
        assert report.records == report.written == exported.memories == 35
        assert report.vectors_reused == 35  # the same embedder: no text embedded again
        assert _snapshot(new) == before
        assert new.history(updated) == history_before
        assert new.get(deleted) is None and new.history(deleted) == []
        again = import_jsonl(new, tmp_path / "home.jsonl")  # idempotent: nothing twice
        assert (again.written, again.unchanged) == (0, 35)
    assert _shard_folders(new_root) == {part_name(partition_of(u, 8), 8) for u in USERS}

    with _memory(old_root, 1) as old:  # the old home is left as it was
        assert _snapshot(old) == before
        assert [e["event"] for e in old.history(deleted)][-1] == "DELETE"
