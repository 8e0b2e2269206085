"""Vector store scale benchmark: upsert throughput, filtered-search latency and RSS.

For every store/mode reachable through the plugin registry and every size, a fresh worker
subprocess (so the RSS it reports is that store's own) builds the store in a temporary
folder, upserts ``size`` records of 384-dim random unit vectors (fixed seed) in batches,
then runs ``--queries`` searches filtered on one ``user_id`` (1 % selectivity, top_k 10)
and reports p50/p95 latency, recall@10 against exact brute force, and the RSS of the
worker process tree after loading (Milvus Lite runs its engine in a child process).

    .venv/bin/python bench/store_scale.py                      # defaults below
    .venv/bin/python bench/store_scale.py --sizes 10000 --stores qdrant-edge,memory

Writes ``bench/results/store_scale.json`` and ``bench/results/store_scale.png``. Reproducible
numbers need an otherwise idle machine; nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_data import tree_rss_mb

DIMS = 384
USERS = 100  # one user_id filter keeps 1 % of the records
SEED = 20240601
BATCH = 1000
RESULTS = Path(__file__).resolve().parent / "results"

# name -> (registry provider, config builder taking a temp folder)
STORES: dict[str, tuple[str, Any]] = {
    "qdrant-edge": ("qdrant", lambda d: {"mode": "edge", "path": str(Path(d) / "edge")}),
    "qdrant-local": ("qdrant", lambda d: {"mode": "local", "path": str(Path(d) / "local")}),
    "milvus-lite": ("milvus", lambda d: {"uri": str(Path(d) / "milvus.db")}),
    "memory": ("memory", lambda d: {}),
    "sqlite-vec": ("sqlite-vec", lambda d: {"path": str(Path(d) / "vectors.db")}),
}
# qdrant-client local mode scans every point in Python per query: cap it so a run ends.
CAPS: dict[str, tuple[int, int]] = {"qdrant-local": (10_000, 20)}  # max size, max queries


def worker(store_name: str, size: int, queries: int) -> dict[str, Any]:
    """Load one store with ``size`` records and time ``queries`` filtered searches."""
    import numpy as np

    from memoweave.filters import parse_filter
    from memoweave.plugins import load_registry
    from memoweave.providers.vector_store import VectorRecord

    provider, make_config = STORES[store_name]
    rng = np.random.default_rng(SEED)
    vectors = rng.standard_normal((size, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    users = rng.integers(0, USERS, size)
    ids = [f"{i:08x}-0000-4000-8000-{i:012x}" for i in range(size)]
    with tempfile.TemporaryDirectory(prefix="mw-bench-") as folder:
        store = load_registry().create("vector_store", provider, make_config(folder))
        store.ensure_collection("bench", DIMS, "cosine")
        started = time.perf_counter()
        for lo in range(0, size, BATCH):
            hi = min(lo + BATCH, size)
            store.upsert(
                [
                    VectorRecord(
                        ids[i],
                        vectors[i].tolist(),
                        {
                            "user_id": f"user_{users[i]}",
                            "memory": f"memory number {i} of the bench",
                        },
                    )
                    for i in range(lo, hi)
                ]
            )
        upsert_s = time.perf_counter() - started
        rss = tree_rss_mb(os.getpid())
        qrng = np.random.default_rng(SEED + 1)
        latencies, recalls = [], []
        for q in range(queries + 5):  # 5 warm-up queries, not timed
            query = qrng.standard_normal(DIMS).astype(np.float32)
            query /= np.linalg.norm(query)
            user = int(qrng.integers(0, USERS))
            node = parse_filter({"user_id": f"user_{user}"})
            t0 = time.perf_counter()
            hits = store.search(query.tolist(), top_k=10, filter=node)
            elapsed = time.perf_counter() - t0
            if q >= 5:
                latencies.append(elapsed * 1000)
                mask = np.flatnonzero(users == user)
                exact = mask[np.argsort(-(vectors[mask] @ query))[:10]]
                recalls.append(len({ids[i] for i in exact} & {h.id for h in hits}) / len(exact))
        store.close()
    lat = np.array(latencies)
    return {
        "store": store_name,
        "size": size,
        "queries": queries,
        "upsert_per_s": size / upsert_s,
        "p50_ms": float(np.percentile(lat, 50)),
        "p95_ms": float(np.percentile(lat, 95)),
        "recall_at_10": float(np.mean(recalls)),
        "rss_mb": rss,
    }


def run_one(store: str, size: int, queries: int) -> dict[str, Any]:
    """Run :func:`worker` in a fresh interpreter and return its result (or the error)."""
    cmd = [sys.executable, __file__, "--worker", store, str(size), str(queries)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode == 0 and lines:
        return json.loads(lines[-1])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"store": store, "size": size, "queries": queries, "error": tail}


def plot(results: list[dict[str, Any]], path: Path) -> None:
    """p50 latency and upsert throughput against size, one line per store."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for store in sorted({r["store"] for r in results}):
        rows = sorted(
            (r for r in results if r["store"] == store and "error" not in r),
            key=lambda r: r["size"],
        )
        if rows:
            sizes = [r["size"] for r in rows]
            ax1.plot(sizes, [r["p50_ms"] for r in rows], marker="o", label=store)
            ax2.plot(sizes, [r["upsert_per_s"] for r in rows], marker="o", label=store)
    ax1.axhline(10, color="grey", linestyle="--", linewidth=1, label="10 ms target")
    for ax, title in ((ax1, "filtered search p50 (ms, log)"), (ax2, "upsert (records/s, log)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("records")
        ax.set_title(title)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated record counts")
    parser.add_argument("--stores", default=",".join(STORES), help=f"subset of {list(STORES)}")
    parser.add_argument("--queries", type=int, default=200, help="filtered searches per run")
    parser.add_argument(
        "--worker", nargs=3, metavar=("STORE", "SIZE", "QUERIES"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], int(args.worker[1]), int(args.worker[2]))))
        return
    results = []
    print(
        f"{'store':<14}{'size':>8}{'upsert/s':>11}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'recall':>8}{'RSS MiB':>9}"
    )
    for store in args.stores.split(","):
        if store not in STORES:
            parser.error(f"unknown store {store!r}; choose from {list(STORES)}")
        for size in (int(s) for s in args.sizes.split(",")):
            max_size, max_queries = CAPS.get(store, (size, args.queries))
            if size > max_size:
                print(f"{store:<14}{size:>8}  skipped: capped at {max_size} records (too slow)")
                continue
            result = run_one(store, size, min(args.queries, max_queries))
            results.append(result)
            if "error" in result:
                print(f"{store:<14}{size:>8}  error: {result['error']}")
            else:
                print(
                    f"{store:<14}{size:>8}{result['upsert_per_s']:>11.0f}{result['p50_ms']:>9.2f}"
                    f"{result['p95_ms']:>9.2f}{result['recall_at_10']:>8.3f}{result['rss_mb']:>9.0f}"
                )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "store_scale.json").write_text(json.dumps(results, indent=2) + "\n")
    plot(results, RESULTS / "store_scale.png")
    print(f"wrote {RESULTS / 'store_scale.json'} and {RESULTS / 'store_scale.png'}")


if __name__ == "__main__":
    main()
