"""Embedding speed of the local embedders: cold start, query latency, batch throughput.

For each embedder (default: ``onnx`` with its default single intra-op thread, ``onnx``
with one thread per core, and ``sentence-transformers``), built through
``memoweave.plugins.load_registry()``:

- cold start: a fresh interpreter imports memoweave, loads the registry, creates the
  embedder and embeds one query; reported as the in-process time (import + registry +
  load + first embed), the provider's share alone (create + first embed, which includes
  importing the runtime) and the wall time of the whole subprocess (including
  interpreter start-up), median of ``--cold-runs`` runs;
- single-query latency: ``embed([short query], purpose="query")`` ``--runs`` times after
  a warm-up, p50 and p95 in milliseconds;
- batch throughput: ``--texts`` LoCoMo turns (from ``../shared/bench/locomo/locomo-dev.json``
  relative to the repository root; generated sentences if it is absent) embedded in one
  call with ``batch_size=--batch-size``; texts per second.

Each embedder is measured in its own subprocess so torch never shares a process with the
ONNX path. The machine may be shared: the load average is recorded with the results.
Prints a table and writes ``bench/results/embed_speed.json``.

    .venv/bin/python bench/embed_speed.py [--runs 200] [--texts 1000] [--batch-size 32]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = ROOT.parent / "shared" / "bench" / "locomo" / "locomo-dev.json"
RESULTS = Path(__file__).resolve().parent / "results"
QUERY = "What did Caroline research?"
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "onnx": ("onnx", {}),  # default: one intra-op thread
    "onnx-all-cores": ("onnx", {"intra_op_threads": 0}),
    "sentence-transformers": ("sentence-transformers", {}),
}

COLD_SNIPPET = """
import json, sys, time
t0 = time.perf_counter()
from memoweave.plugins import load_registry
registry = load_registry()
t1 = time.perf_counter()
embedder = registry.create("embedder", sys.argv[1], json.loads(sys.argv[2]))
embedder.embed([sys.argv[3]], purpose="query")
t2 = time.perf_counter()
print(json.dumps({"in_process_s": t2 - t0, "provider_s": t2 - t1,
                  "torch_imported": "torch" in sys.modules}))
"""


def load_texts(count: int) -> tuple[list[str], str]:
    """``count`` dialogue turns from LoCoMo (cycled if needed) and where they came from."""
    texts: list[str] = []
    if LOCOMO.is_file():
        for sample in json.loads(LOCOMO.read_text(encoding="utf-8")):
            conversation = sample["conversation"]
            for key in sorted(k for k in conversation if k.startswith("session_")):
                if isinstance(conversation[key], list):
                    texts += [t["text"] for t in conversation[key] if t.get("text")]
        source = str(LOCOMO.relative_to(ROOT.parent))
    if not texts:
        subjects = ["Caroline", "Melanie", "my sister", "the team", "our neighbour"]
        actions = ["went hiking", "painted a sunrise", "adopted a dog", "ran a charity race"]
        places = ["near the lake", "in Lisbon", "at the support group", "after work"]
        texts = [
            f"Yesterday {s} {a} {p}, and it felt great to talk about it."
            for s in subjects
            for a in actions
            for p in places
        ]
        source = "generated"
    return [texts[i % len(texts)] for i in range(count)], source


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def cold_start(name: str, config: dict[str, Any], runs: int) -> dict[str, Any]:
    """Median in-process and wall times of ``runs`` fresh-interpreter starts."""
    inside, provider, wall, torch_seen = [], [], [], False
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", COLD_SNIPPET, name, json.dumps(config), QUERY],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        wall.append(time.perf_counter() - start)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        inside.append(result["in_process_s"])
        provider.append(result["provider_s"])
        torch_seen = torch_seen or result["torch_imported"]
    return {
        "cold_start_s": statistics.median(inside),
        "cold_start_provider_s": statistics.median(provider),
        "cold_start_wall_s": statistics.median(wall),
        "torch_imported": torch_seen,
    }


def warm(name: str, config: dict[str, Any], runs: int, texts: int, batch: int) -> dict[str, Any]:
    """Latency and throughput measured in this process (run as a worker subprocess)."""
    from memoweave.plugins import load_registry

    embedder = load_registry().create("embedder", name, {**config, "batch_size": batch})
    corpus, source = load_texts(texts)
    for _ in range(10):
        embedder.embed([QUERY], purpose="query")
    latencies = []
    for _ in range(runs):
        start = time.perf_counter()
        embedder.embed([QUERY], purpose="query")
        latencies.append((time.perf_counter() - start) * 1000)
    embedder.embed(corpus[:batch])  # warm the batch path
    start = time.perf_counter()
    vectors = embedder.embed(corpus)
    elapsed = time.perf_counter() - start
    assert len(vectors) == len(corpus)
    embedder.close()
    return {
        "query_p50_ms": percentile(latencies, 0.5),
        "query_p95_ms": percentile(latencies, 0.95),
        "throughput_texts_per_s": len(corpus) / elapsed,
        "texts": len(corpus),
        "text_source": source,
        "dims": len(vectors[0]),
    }


def measure(variant: str, args: argparse.Namespace) -> dict[str, Any]:
    """All numbers of one variant: cold starts, then a worker subprocess for the rest."""
    name, config = VARIANTS[variant]
    result: dict[str, Any] = {"embedder": variant, "provider": name, "config": config}
    result.update(cold_start(name, config, args.cold_runs))
    worker = subprocess.run(
        [sys.executable, __file__, "--worker", variant, "--runs", str(args.runs),
         "--texts", str(args.texts), "--batch-size", str(args.batch_size)],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    result.update(json.loads(worker.stdout.strip().splitlines()[-1]))
    return result


def versions() -> dict[str, str]:
    """Versions of the runtimes involved (without importing them)."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for dist in ("onnxruntime", "tokenizers", "torch", "sentence-transformers", "numpy"):
        try:
            found[dist] = version(dist)
        except PackageNotFoundError:
            found[dist] = "not installed"
    return found


def print_table(results: list[dict[str, Any]]) -> None:
    header = (
        f"{'embedder':<24}{'cold (s)':>10}{'provider':>10}{'wall':>8}{'p50 ms':>9}{'p95 ms':>9}"
        f"{'texts/s':>10}  torch"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r['embedder']:<24}{r['cold_start_s']:>10.2f}{r['cold_start_provider_s']:>10.2f}"
            f"{r['cold_start_wall_s']:>8.2f}"
            f"{r['query_p50_ms']:>9.1f}{r['query_p95_ms']:>9.1f}"
            f"{r['throughput_texts_per_s']:>10.0f}  {'yes' if r['torch_imported'] else 'no'}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedders", default=",".join(VARIANTS), help="comma-separated")
    parser.add_argument("--runs", type=int, default=200, help="single-query repetitions")
    parser.add_argument("--texts", type=int, default=1000, help="texts for throughput")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "embed_speed.json")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        name, config = VARIANTS[args.worker]
        print(json.dumps(warm(name, config, args.runs, args.texts, args.batch_size)))
        return
    variants = [v.strip() for v in args.embedders.split(",") if v.strip()]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        parser.error(f"unknown embedders {unknown}; choose from {sorted(VARIANTS)}")
    load_before = os.getloadavg()
    results = [measure(variant, args) for variant in variants]
    print_table(results)
    report = {
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "loadavg_before": load_before,
            "loadavg_after": os.getloadavg(),
        },
        "versions": versions(),
        "settings": {
            "query": QUERY,
            "runs": args.runs,
            "texts": args.texts,
            "batch_size": args.batch_size,
            "cold_runs": args.cold_runs,
        },
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
