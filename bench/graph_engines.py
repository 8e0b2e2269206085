"""LadybugDB vs Kuzu under the memoweave graph store: the conformance kit and a small load.

Both engines share one Python API (LadybugDB is Kuzu's fork) but cannot be imported in one
process, so each runs in its own subprocess through ``memoweave_ladybug``'s store with the
engine module swapped (``LadybugGraphStore.ENGINE``). Per engine:

1. the whole ``GraphStoreConformance`` suite on a database file (pass / fail counts);
2. a LoCoMo-sized load: ``--users`` scopes x ``--memories`` memories, each memory one
   ``upsert`` transaction of 3 relations over a Zipf-skewed vocabulary of 300 entity names
   per scope (as one ``add`` writes them), then ``--queries`` neighbour walks of 1 and 2
   hops from 2 names, a ``delete_memories`` of single memories, the file size and the RSS.

Needs ``kuzu`` beside ``ladybug`` in the venv (``.venv/bin/pip install kuzu==0.11.3``).

    .venv/bin/python bench/graph_engines.py                # both engines
    .venv/bin/python bench/graph_engines.py --engines ladybug --memories 200
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
KIT_MODULE = textwrap.dedent(
    """
    import pytest
    from memoweave.testing import GraphStoreConformance
    from memoweave_ladybug import LadybugConfig
    from memoweave_ladybug.graph_store import LadybugGraphStore

    class Store(LadybugGraphStore):
        ENGINE = {engine!r}

    class TestKit(GraphStoreConformance):
        @pytest.fixture
        def graph_factory(self, tmp_path):
            config = LadybugConfig(path=str(tmp_path / "db"), buffer_pool_mb=32)
            return lambda: Store(config)
    """
)


def _kit(engine: str) -> dict[str, Any]:
    import pytest

    counts: dict[str, Any] = {"passed": 0, "failed": 0, "skipped": 0, "failures": []}

    class Count:
        def pytest_runtest_logreport(self, report: Any) -> None:
            if report.when == "call" or (report.when == "setup" and report.skipped):
                counts[report.outcome] = counts.get(report.outcome, 0) + 1
                if report.failed:
                    counts["failures"].append(report.nodeid.rsplit("::", 1)[-1])

    with tempfile.TemporaryDirectory() as tmp:
        module = Path(tmp) / f"test_kit_{engine}.py"
        module.write_text(KIT_MODULE.format(engine=engine))
        pytest.main([str(module), "-q", "-p", "no:cacheprovider", "--no-header"], plugins=[Count()])
    return counts


def _p50(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 2)


def _load(engine: str, users: int, memories: int, queries: int) -> dict[str, Any]:
    from memoweave_ladybug import LadybugConfig
    from memoweave_ladybug.graph_store import LadybugGraphStore

    from memoweave.providers.graph_store import GraphRelation

    class Store(LadybugGraphStore):
        ENGINE = engine

    rng = random.Random(20240601)
    vocab = [f"entity {i}" for i in range(300)]
    weights = [1 / (i + 1) for i in range(300)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.db"
        started = time.perf_counter()
        store = Store(LadybugConfig(path=str(path), buffer_pool_mb=128))
        store.ensure_graph("bench")
        open_ms = (time.perf_counter() - started) * 1000
        writes: list[float] = []
        for m in range(memories):
            for u in range(users):
                scope = {"user_id": f"user {u}"}
                names = rng.choices(vocab, weights, k=4)
                rels = [
                    GraphRelation(f"r{u}-{m}-{k}", scope, names[0], "rel", names[k], f"m{u}-{m}")
                    for k in (1, 2, 3)
                ]
                t = time.perf_counter()
                store.upsert(relations=rels)
                writes.append(time.perf_counter() - t)
        hop1: list[float] = []
        hop2: list[float] = []
        found = []
        for q in range(queries):
            scope = {"user_id": f"user {q % users}"}
            names = rng.sample(vocab[:50], 2)
            t = time.perf_counter()
            hits = store.neighbours(scope, names, hops=1, limit=200)
            hop1.append(time.perf_counter() - t)
            t = time.perf_counter()
            hits2 = store.neighbours(scope, names, hops=2, limit=200)
            hop2.append(time.perf_counter() - t)
            found.append((len(hits), len(hits2)))
        deletes: list[float] = []
        for d in range(min(queries, memories)):
            scope = {"user_id": f"user {d % users}"}
            t = time.perf_counter()
            store.delete_memories(scope, [f"m{d % users}-{d}"])
            deletes.append(time.perf_counter() - t)
        relations = store.count()
        store.close()
        size = sum(p.stat().st_size for p in Path(tmp).rglob("*") if p.is_file())
    return {
        "relations": relations,
        "open_ms": round(open_ms, 1),
        "upsert_p50_ms": _p50(writes),
        "adds_per_s": round(len(writes) / sum(writes), 1),
        "hop1_p50_ms": _p50(hop1),
        "hop2_p50_ms": _p50(hop2),
        "delete_p50_ms": _p50(deletes),
        "mean_hits_1_2": [round(statistics.mean(x), 1) for x in zip(*found, strict=True)],
        "file_mib": round(size / 2**20, 1),
        "rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _worker(args: argparse.Namespace) -> None:
    module = __import__(args.worker)
    out = {
        "engine": args.worker,
        "version": getattr(module, "__version__", "?"),
        "kit": _kit(args.worker),
        **_load(args.worker, args.users, args.memories, args.queries),
    }
    Path(args.out).write_text(json.dumps(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="ladybug,kuzu")
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--memories", type=int, default=150, help="memories per user")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args)
        return
    rows = []
    for engine in args.engines.split(","):
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
            out = handle.name
        cmd = [sys.executable, __file__, "--worker", engine, "--out", out]
        cmd += ["--users", str(args.users), "--memories", str(args.memories)]
        cmd += ["--queries", str(args.queries)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{engine}: failed\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
            continue
        rows.append(json.loads(Path(out).read_text()))
        os.unlink(out)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "graph_engines.json").write_text(json.dumps(rows, indent=2))
    print(f"load average {os.getloadavg()[0]:.2f}; {args.users} users x {args.memories} adds")
    print(
        "| engine | kit passed/failed/skipped | relations | adds/s | upsert p50 ms | "
        "1-hop p50 ms | 2-hop p50 ms | delete p50 ms | file MiB | RSS MiB |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        kit = r["kit"]
        print(
            f"| {r['engine']} {r['version']} | {kit['passed']}/{kit['failed']}/{kit['skipped']}"
            f" | {r['relations']} | {r['adds_per_s']} | {r['upsert_p50_ms']} | "
            f"{r['hop1_p50_ms']} | {r['hop2_p50_ms']} | {r['delete_p50_ms']} | "
            f"{r['file_mib']} | {r['rss_mib']} |"
        )
    for r in rows:
        for name in r["kit"]["failures"]:
            print(f"{r['engine']} fails {name}")


if __name__ == "__main__":
    main()
