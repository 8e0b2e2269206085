"""Retrieval quality on LoCoMo: recall@5/10/20 of the evidence turns, memoweave vs mem0.

Every turn is stored with ``infer=False`` (one memory per turn, its ``dia_id`` kept as the
source message id, its session date as the observation date), scoped to its conversation.
Every category 1-4 question with evidence is asked within its conversation.

    .venv/bin/python bench/locomo_recall.py                 # the embedded default stack
    .venv/bin/python bench/locomo_recall.py --peer mem0     # and mem0 in the same run
    .venv/bin/python bench/locomo_recall.py --config my.yaml --data other-split.json

Prints a table, writes bench/results/locomo_recall.json and a PNG bar chart. Peers not
rerun keep their numbers from the previous output file (marked ``from_previous_run``);
a ``--conversations`` subset run keeps none.
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

from locomo_data import (
    DEFAULT_DATA,
    KS,
    load,
    percentile,
    questions,
    score,
    summarise,
    turns,
)

RESULTS = Path(__file__).resolve().parent / "results"


def run_memoweave(data: list[dict], config: str | None, home: str) -> dict[str, Any]:
    """Ingest and query with memoweave; return summary metrics and timings."""
    os.environ["MEMOWEAVE_HOME"] = home
    from memoweave import Memory

    memory = Memory(config) if config else Memory()
    all_turns = list(turns(data))
    sessions: dict[tuple[str, int], list] = {}
    for turn in all_turns:
        sessions.setdefault((turn.conversation, turn.session), []).append(turn)
    start = time.perf_counter()
    for (conversation, _), batch in sessions.items():
        memory.add(
            [{"role": "user", "content": t.text, "name": t.speaker, "id": t.dia_id} for t in batch],
            user_id=conversation,
            infer=False,
            observed_at=batch[0].observed_at,
        )
    ingest_s = time.perf_counter() - start
    rows, latencies, cpu = [], [], []
    for question in questions(data):
        t0, c0 = time.perf_counter(), time.process_time()
        hits = memory.search(question.question, user_id=question.conversation, top_k=max(KS))
        latencies.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        ranked = [
            h["source_message_ids"][0] for h in hits["results"] if h.get("source_message_ids")
        ]
        rows.append((question, score(question, ranked)))
    memory.close()
    return {
        "system": "memoweave",
        "stack": describe_stack(config),
        "metrics": summarise(rows),
        "ingest_ms_per_turn": ingest_s * 1000 / len(all_turns),
        "search_p50_ms": percentile(latencies, 50),
        "search_p95_ms": percentile(latencies, 95),
        "search_cpu_p50_ms": percentile(cpu, 50),
        "load_average": os.getloadavg()[0],
        "turns": len(all_turns),
        "questions": len(rows),
        "per_conversation_recall@10": per_conversation(rows),
    }


def per_conversation(rows: list) -> dict[str, float]:
    """recall@10 of each conversation (to compare halves of a split)."""
    groups: dict[str, list[float]] = {}
    for question, metrics in rows:
        groups.setdefault(question.conversation, []).append(metrics["recall@10"])
    return {conv: sum(v) / len(v) for conv, v in sorted(groups.items())}


def describe_stack(config: str | None) -> str:
    """A short description of the providers used."""
    if not config:
        from memoweave.memory.defaults import DEFAULT_EMBEDDER, DEFAULT_VECTOR_STORE

        return f"embedded default ({DEFAULT_VECTOR_STORE} + {DEFAULT_EMBEDDER})"
    return f"config {config}"


def run_peer(name: str, data_path: Path) -> dict[str, Any]:
    """Run a peer system's script in its own virtualenv (see bench/peers/)."""
    peers = Path(__file__).resolve().parent / "peers"
    setup = peers / f"{name}_env.sh"
    python = subprocess.run(["bash", str(setup)], check=True, capture_output=True, text=True)
    interpreter = python.stdout.strip().splitlines()[-1]
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        out_path = out.name
    script = str(peers / f"{name}_locomo.py")
    subprocess.run(
        [interpreter, script, "--data", str(data_path), "--out", out_path],
        check=True,
        env={**os.environ, "MEM0_TELEMETRY": "False", "HF_HUB_OFFLINE": "1"},
    )
    return json.loads(Path(out_path).read_text())


def previous_peers(path: Path, systems: set[str]) -> list[dict[str, Any]]:
    """Results of peers not rerun this time, kept from an earlier ``path`` (a full mem0 run
    takes about an hour); each is marked ``"from_previous_run": true``."""
    if not path.exists():
        return []
    kept = [r for r in json.loads(path.read_text()) if r.get("system") not in systems]
    return [{**r, "from_previous_run": True} for r in kept if r.get("system") != "memoweave"]


def print_table(results: list[dict[str, Any]]) -> None:
    """One row per system and group."""
    header = (
        f"{'system':<11}{'group':<13}{'n':>5}"
        + "".join(f"{'R@' + str(k):>8}" for k in KS)
        + f"{'all@10':>8}"
    )
    print(header)
    print("-" * len(header))
    for result in results:
        for group, m in result["metrics"].items():
            print(
                f"{result['system']:<11}{group:<13}{int(m['n']):>5}"
                + "".join(f"{m[f'recall@{k}']:>8.3f}" for k in KS)
                + f"{m['all@10']:>8.3f}"
            )
    print()
    for r in results:
        print(
            f"{r['system']}: {r.get('stack', '')}; ingest {r['ingest_ms_per_turn']:.1f} ms/turn; "
            f"search p50 {r['search_p50_ms']:.1f} ms, p95 {r['search_p95_ms']:.1f} ms"
            + (
                f" (CPU p50 {r['search_cpu_p50_ms']:.1f} ms, load average {r['load_average']:.1f})"
                if "search_cpu_p50_ms" in r
                else ""
            )
        )


def plot(results: list[dict[str, Any]], path: Path) -> None:
    """Grouped bars of recall@10 per category and system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(results[0]["metrics"])
    width = 0.8 / len(results)
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, result in enumerate(results):
        values = [result["metrics"].get(g, {}).get("recall@10", 0.0) for g in groups]
        ax.bar([x + i * width for x in range(len(groups))], values, width, label=result["system"])
    ax.set_xticks([x + width * (len(results) - 1) / 2 for x in range(len(groups))], groups)
    ax.set_ylabel("recall@10")
    ax.set_ylim(0, 1)
    ax.set_title("LoCoMo evidence recall@10")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--config", help="memoweave YAML config (default: embedded stack)")
    parser.add_argument("--peer", action="append", default=[], choices=["mem0"])
    parser.add_argument(
        "--out",
        type=Path,
        help="results file (default: results/locomo_recall.json, or "
        "results/locomo_recall_<ids>.json for a --conversations subset)",
    )
    parser.add_argument(
        "--conversations", help="comma-separated sample ids to keep (e.g. a held-out half)"
    )
    args = parser.parse_args()
    data = load(args.data)
    if args.out is None:
        suffix = "_" + args.conversations.replace(",", "_") if args.conversations else ""
        args.out = RESULTS / f"locomo_recall{suffix}.json"
    if args.conversations:
        keep = set(args.conversations.split(","))
        data = [sample for sample in data if sample["sample_id"] in keep]
    with tempfile.TemporaryDirectory() as home:
        results = [run_memoweave(data, args.config, home)]
    for peer in args.peer:
        results.append(run_peer(peer, args.data))
    if not args.conversations:
        results.extend(previous_peers(args.out, {r["system"] for r in results}))
    print_table(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    png = args.out.with_suffix(".png")
    plot(results, png)
    print(f"\nwrote {args.out} and {png}")


if __name__ == "__main__":
    main()
