"""Vector store scale benchmark: upsert throughput, filtered-search latency and RSS.

For every store/mode reachable through the plugin registry and every size, a fresh worker
subprocess (so the RSS it reports is that store's own) builds the store in a temporary
folder, upserts ``size`` records of 384-dim unit vectors in batches of 1,000 spread over
``--users`` user ids, then runs ``--queries`` searches filtered on one ``user_id`` (top_k
10) and reports p50/p95 latency and process-CPU ms per search, recall@10 against exact
brute force over that user's records, and the RSS of the worker process tree with the
store reopened (the benchmark's own copy of the vectors out of memory; Milvus Lite runs
its engine in a child process).

Vectors (``--vectors``): ``random`` (fixed seed; no structure, the worst case for a graph
index) or ``corpus``, the all-MiniLM-L6-v2 vectors of ``peer.py``'s corpus (its cache,
``bench/peer_memoweave.py --cache N`` builds it) searched with embedded questions about it.

    .venv/bin/python bench/store_scale.py                      # defaults below
    .venv/bin/python bench/store_scale.py --sizes 10000 --stores qdrant-edge,memory
    .venv/bin/python bench/store_scale.py --sizes 100000 --users 1 --vectors corpus

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

from peer_data import load_average, tree_rss_mb

DIMS = 384
USERS = 100  # default: one user_id filter keeps 1 % of the records
SEED = 20240601
BATCH = 1000
WARM_UP = 20  # untimed searches first: a reopened store reads its pages in
RESULTS = Path(__file__).resolve().parent / "results"

# name -> (registry provider, config builder taking a temp folder)
STORES: dict[str, tuple[str, Any]] = {
    "qdrant-edge": ("qdrant", lambda d: {"mode": "edge", "path": str(Path(d) / "edge")}),
    "qdrant-edge-exact": (  # no HNSW: every search scans (the edge engine before issue 14)
        "qdrant",
        lambda d: {"mode": "edge", "path": str(Path(d) / "edge"), "index_threshold_kb": 0},
    ),
    "qdrant-local": ("qdrant", lambda d: {"mode": "local", "path": str(Path(d) / "local")}),
    "milvus-lite": ("milvus", lambda d: {"uri": str(Path(d) / "milvus.db")}),
    "memory": ("memory", lambda d: {}),
    "sqlite-vec": ("sqlite-vec", lambda d: {"path": str(Path(d) / "vectors.db")}),
}
# qdrant-client local mode scans every point in Python per query: cap it so a run ends.
CAPS: dict[str, tuple[int, int]] = {"qdrant-local": (10_000, 20)}  # max size, max queries


def dataset(size: int, users: int, kind: str, queries: int) -> tuple[Any, Any, Any]:
    """``(vectors, user of each record, query vectors)``, all unit length."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    if kind == "corpus":
        from peer_data import corpus, load_vectors
        from peer_memoweave import MODEL

        from memoweave.plugins import load_registry

        cached = load_vectors(size, MODEL)
        if cached is None:
            raise SystemExit(f"no corpus vectors for {size}: bench/peer_memoweave.py --cache")
        vectors = np.array(cached, dtype=np.float32)
        facts = corpus(size)
        asked = [facts[int(i)].question for i in rng.integers(0, size, queries + WARM_UP)]
        embedder = load_registry().create("embedder", "onnx")
        query_vectors = np.asarray(embedder.embed(asked, purpose="query"), dtype=np.float32)
        embedder.close()
    else:
        vectors = rng.standard_normal((size, DIMS)).astype(np.float32)
        query_vectors = rng.standard_normal((queries + WARM_UP, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query_vectors /= np.linalg.norm(query_vectors, axis=1, keepdims=True)
    return vectors, rng.integers(0, users, size), query_vectors


def worker(store_name: str, size: int, queries: int, users: int, kind: str) -> dict[str, Any]:
    """Load one store with ``size`` records, then time ``queries`` filtered searches: in a
    new process that reopens it when the store is persistent (so RSS is what a process
    opening that store holds), in this one otherwise."""
    import numpy as np

    from memoweave.plugins import load_registry
    from memoweave.providers.vector_store import VectorRecord

    provider, make_config = STORES[store_name]
    vectors, owner, query_vectors = dataset(size, users, kind, queries)
    with tempfile.TemporaryDirectory(prefix="mw-bench-") as folder:
        store = load_registry().create("vector_store", provider, make_config(folder))
        store.ensure_collection("bench", DIMS, "cosine")
        started = time.perf_counter()
        for lo in range(0, size, BATCH):
            store.upsert(
                [
                    VectorRecord(
                        record_id(i),
                        vectors[i].tolist(),
                        {"user_id": f"user_{owner[i]}", "memory": f"memory number {i}"},
                    )
                    for i in range(lo, min(lo + BATCH, size))
                ]
            )
        upsert_s = time.perf_counter() - started
        for name, array in (("vectors", vectors), ("owner", owner), ("queries", query_vectors)):
            np.save(Path(folder) / f"{name}.npy", array)
        del vectors
        if store.capabilities.persistent:
            store.close()
            cmd = [sys.executable, __file__, "--search-worker", store_name, folder]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
            searched = json.loads(proc.stdout.splitlines()[-1])
        else:
            searched = search_phase(store, Path(folder))
            store.close()
    return {
        "store": store_name,
        "size": size,
        "users": users,
        "vectors": kind,
        "queries": queries,
        "upsert_per_s": size / upsert_s,
        **searched,
        "load_average": load_average(),
    }


def record_id(i: int) -> str:
    return f"{i:08x}-0000-4000-8000-{i:012x}"


def search_phase(store: Any, folder: Path) -> dict[str, float]:
    """Time the searches of ``folder``'s queries on ``store``: latency, CPU, RSS after
    them (before the vectors are read back), then recall@10 against brute force."""
    import numpy as np

    from memoweave.filters import parse_filter

    owner = np.load(folder / "owner.npy")
    users = int(owner.max()) + 1
    qrng = np.random.default_rng(SEED + 1)
    latencies, cpu, asked = [], [], []
    for q, query in enumerate(np.load(folder / "queries.npy")):  # WARM_UP untimed first
        user = int(qrng.integers(0, users))
        node = parse_filter({"user_id": f"user_{user}"})
        t0, c0 = time.perf_counter(), time.process_time()
        hits = store.search(query.tolist(), top_k=10, filter=node)
        elapsed, spent = time.perf_counter() - t0, time.process_time() - c0
        if q >= WARM_UP:
            latencies.append(elapsed * 1000)
            cpu.append(spent * 1000)
            asked.append((query, user, {h.id for h in hits}))
    rss = tree_rss_mb(os.getpid())
    vectors = np.load(folder / "vectors.npy", mmap_mode="r")
    recalls = []
    for query, user, found in asked:
        mask = np.flatnonzero(owner == user)
        exact = mask[np.argsort(-(vectors[mask] @ query))[:10]]
        recalls.append(len({record_id(int(i)) for i in exact} & found) / len(exact))
    lat = np.array(latencies)
    return {
        "p50_ms": float(np.percentile(lat, 50)),
        "p95_ms": float(np.percentile(lat, 95)),
        "cpu_ms": float(np.mean(cpu)),
        "recall_at_10": float(np.mean(recalls)),
        "rss_mb": rss,
    }


def search_worker(store_name: str, folder: str) -> dict[str, float]:
    """:func:`search_phase` in a new process on the store ``worker`` filled in ``folder``."""
    from memoweave.plugins import load_registry

    provider, make_config = STORES[store_name]
    store = load_registry().create("vector_store", provider, make_config(folder))
    store.ensure_collection("bench", DIMS, "cosine")
    try:
        return search_phase(store, Path(folder))
    finally:
        store.close()


def run_one(store: str, size: int, queries: int, users: int, kind: str) -> dict[str, Any]:
    """Run :func:`worker` in a fresh interpreter and return its result (or the error)."""
    cmd = [sys.executable, __file__, "--worker", store, str(size), str(queries), str(users), kind]
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
    parser.add_argument("--users", type=int, default=USERS, help="user ids (1: one scope)")
    parser.add_argument("--vectors", choices=("random", "corpus"), default="random")
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("--search-worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.search_worker:
        print(json.dumps(search_worker(*args.search_worker)))
        return
    if args.worker:
        name, size, queries, users, kind = args.worker
        print(json.dumps(worker(name, int(size), int(queries), int(users), kind)))
        return
    results = []
    print(
        f"{'store':<14}{'size':>8}{'upsert/s':>11}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'CPU ms':>8}{'recall':>8}{'RSS MiB':>9}   ({args.users} users, {args.vectors})"
    )
    for store in args.stores.split(","):
        if store not in STORES:
            parser.error(f"unknown store {store!r}; choose from {list(STORES)}")
        for size in (int(s) for s in args.sizes.split(",")):
            max_size, max_queries = CAPS.get(store, (size, args.queries))
            if size > max_size:
                print(f"{store:<14}{size:>8}  skipped: capped at {max_size} records (too slow)")
                continue
            result = run_one(store, size, min(args.queries, max_queries), args.users, args.vectors)
            results.append(result)
            if "error" in result:
                print(f"{store:<14}{size:>8}  error: {result['error']}")
            else:
                print(
                    f"{store:<14}{size:>8}{result['upsert_per_s']:>11.0f}{result['p50_ms']:>9.2f}"
                    f"{result['p95_ms']:>9.2f}{result['cpu_ms']:>8.2f}"
                    f"{result['recall_at_10']:>8.3f}{result['rss_mb']:>9.0f}"
                )
    print(f"load average {load_average()}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "store_scale.json").write_text(json.dumps(results, indent=2) + "\n")
    plot(results, RESULTS / "store_scale.png")
    print(f"wrote {RESULTS / 'store_scale.json'} and {RESULTS / 'store_scale.png'}")


if __name__ == "__main__":
    main()
