"""An import killed with SIGKILL in the middle, then run again: nothing lost, nothing twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from memoweave.memory import Memory
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder
from memoweave.transfer import import_jsonl

from .conftest import sample_lines, write_export

_CHILD = """
import sys
from memoweave.memory import Memory
from memoweave.stores.memory import InMemoryVectorStore
from memoweave.testing.doubles import HashingEmbedder
from memoweave.transfer import import_jsonl

home, source = sys.argv[1], sys.argv[2]
memory = Memory(
    {"history_db_path": home + "/history.db"},
    embedder=HashingEmbedder(dims=64),
    vector_store=InMemoryVectorStore({"path": home + "/store"}),
)
import_jsonl(memory, source, batch_size=20, progress=lambda done, total: print(done, flush=True))
print("finished", flush=True)
"""


def _open(home: Path) -> Memory:
    return Memory(
        {"history_db_path": str(home / "history.db")},
        embedder=HashingEmbedder(dims=64),
        vector_store=InMemoryVectorStore({"path": str(home / "store")}),
    )


def test_killed_import_resumes_without_loss_or_duplicates(tmp_path: Path) -> None:
    lines = sample_lines(300)
    source = write_export(tmp_path / "in.jsonl", lines)
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(tmp_path), str(source)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "MEMOWEAVE_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    assert child.stdout is not None
    progress = [child.stdout.readline().strip() for _ in range(3)]
    os.kill(child.pid, signal.SIGKILL)  # in the middle of the fourth batch
    child.wait(timeout=30)
    assert progress == ["20", "40", "60"] and child.returncode == -signal.SIGKILL

    memory = _open(tmp_path)
    try:
        memory._ensure_ready()  # recovers the half-done batch, binds the collection
        partial = memory._providers.vector_store.count()
        assert 60 <= partial < 300
        report = import_jsonl(memory, source)
        assert report.written + report.unchanged == 300 and report.invalid == []
        store = memory._providers.vector_store
        assert store.count() == 300
        listed = store.list(limit=1000).records
        assert sorted(r.id for r in listed) == sorted(line["id"] for line in lines)
        events = memory._providers.history.connection.execute(
            "SELECT COUNT(*), COUNT(DISTINCT id) FROM history WHERE status='committed'"
        ).fetchone()
        expected = sum(len(line["history"]) for line in lines)
        assert tuple(events) == (expected, expected)
        assert memory._providers.history.pending_journal() == []
        assert import_jsonl(memory, source).unchanged == 300
    finally:
        memory.close()
