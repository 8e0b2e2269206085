"""The mem0 side of ``peer.py`` (runs in ``bench/.venv-mem0``): one layout per process.

mem0 2.2.1 with its default local Qdrant on disk and its ``huggingface`` embedder on the
same all-MiniLM-L6-v2 (``add_cost_mem0.mem0_config``), driven through the same phases as
memoweave (``peer_data.run_phases``): bulk fill with the cached corpus vectors, timed
ingest with the real embedder, searches (``threshold=0`` so mem0's cut-off hides
nothing), ``add(infer=True)`` with ``add_cost_mem0``'s scripted 200 ms LLM, RSS, disk and
a search from a new process. No network, no telemetry.

    bench/.venv-mem0/bin/python bench/peers/mem0_peer.py --layout 1000 --out r.json
    bench/.venv-mem0/bin/python bench/peers/mem0_peer.py --cold HOME USER QUERY
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from add_cost_mem0 import ScriptedMem0LLM, count_embeddings, mem0_config, timed_add
from peer_data import (
    Layout,
    cold_start,
    corpus,
    disk_mb,
    load_average,
    load_vectors,
    plan_arguments,
    plan_of,
    pool_size,
    run_phases,
    write_json,
)

MODEL = "onnx-minilm-int8"  # the cache peer_memoweave.py builds (same weights, int8)


class Mem0System:
    """One mem0 ``Memory`` on ``home`` with cached corpus vectors and the scripted LLM."""

    def __init__(self, home: Path, known: dict[str, Any]) -> None:
        from mem0 import Memory

        self.memory = Memory.from_config(mem0_config(str(home)))
        self.llm = ScriptedMem0LLM()
        self.memory.llm = self.llm
        embedder = self.memory.embedding_model
        embed = embedder.embed

        def cached(text: Any, *a: Any, **k: Any) -> Any:
            vector = known.get(text) if isinstance(text, str) else None
            return vector.tolist() if vector is not None else embed(text, *a, **k)

        embedder.embed = cached
        self.counts = count_embeddings(self.memory)

    def add(self, texts: list[str], user_id: str) -> None:
        self.memory.add(
            [{"role": "user", "content": t} for t in texts], user_id=user_id, infer=False
        )

    def search(self, query: str, user_id: str) -> Any:
        return self.memory.search(query, filters={"user_id": user_id}, top_k=10, threshold=0.0)

    def infer_add(self, exchange: Any, user_id: str) -> dict[str, float]:
        return timed_add(self.memory, self.llm, self.counts, exchange, user_id)

    def close(self) -> None:
        self.memory.close()  # mem0 closes its SQLite only: qdrant local keeps its folder lock
        self.memory.vector_store.client.close()


def cold(home: str, user: str, query: str) -> None:
    """A new process's first search: import, construct, search, print the results."""
    from mem0 import Memory

    memory = Memory.from_config(mem0_config(home))
    hits = memory.search(query, filters={"user_id": user}, top_k=10, threshold=0.0)
    print(json.dumps({"results": hits["results"] if isinstance(hits, dict) else hits}, default=str))


def run(layout: Layout, args: argparse.Namespace) -> dict[str, Any]:
    facts = corpus(pool_size(layout))
    vectors = load_vectors(len(facts), MODEL)
    if vectors is None:
        raise SystemExit(f"no embedding cache for {len(facts)} facts: run peer.py first")
    known = {f.text: vectors[i] for i, f in enumerate(facts)}
    del vectors  # only the views in known keep the cache mapped, until the fill ends
    home = Path(tempfile.mkdtemp(prefix="peer-mem0-", dir=args.tmp))
    started = time.perf_counter()
    system = Mem0System(home, known)
    result: dict[str, Any] = {
        "system": "mem0",
        "label": "mem0 2.2.1 default (local Qdrant on disk + sentence-transformers MiniLM)",
        "layout": layout.key,
        "open_s": time.perf_counter() - started,
    }
    figures, _, (user, query) = run_phases(system, layout, facts, plan_of(args), "mem0", known)
    result.update(figures)
    system.close()
    result["disk_mb"] = disk_mb(home)
    cmd = [sys.executable, __file__, "--cold", str(home), user, query]
    result.update(cold_start(cmd, dict(os.environ), args.cold_runs))
    shutil.rmtree(home, ignore_errors=True)
    result["load_average"] = load_average()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    plan_arguments(parser)
    parser.add_argument("--cold", nargs=3, metavar=("HOME", "USER", "QUERY"))
    args = parser.parse_args()
    if args.cold:
        cold(*args.cold)
        return
    write_json(args.out, run(args.layout, args))


if __name__ == "__main__":
    main()
