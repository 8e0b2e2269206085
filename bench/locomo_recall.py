"""Retrieval quality on LoCoMo: recall@5/10/20 of the evidence turns, memoweave vs
dense-only vs mem0, on raw turns or on distilled facts.

``--shape turns``: every turn is stored with ``infer=False`` (one memory per turn, its
``dia_id`` kept as the source message id). ``--shape facts``: every session observation
(a short fact about a speaker, citing its turns) is stored as one memory, its cited turn
ids in metadata. Each memory has its session date as the observation date and is scoped
to its conversation. Every category 1-4 question with evidence is asked within its
conversation; a result counts for the evidence turns it is (turns) or cites (facts).
"dense-only" is plain cosine similarity over the same store and embedder.

    .venv/bin/python bench/locomo_recall.py                 # the embedded default stack
    .venv/bin/python bench/locomo_recall.py --shape facts   # observations as memories
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
    facts,
    load,
    percentile,
    questions,
    score_cited,
    summarise,
    turns,
)
from retrieval_eval import (
    RERANK_SYSTEM,
    append_capture,
    dense_order,
    explained_pool,
    memory_config,
    open_capture,
    reranker_name,
)

RESULTS = Path(__file__).resolve().parent / "results"


def ingest(memory: Any, data: list[dict], shape: str) -> int:
    """Store the split as memories: every turn (one ``add`` of a session's messages,
    ``infer=False``, each turn's ``dia_id`` as its message id) or every observation (one
    ``add`` of its text, ``infer=False``, the turns it cites in metadata); each with its
    session date as ``observed_at``. Returns how many memories were stored."""
    if shape == "facts":
        stored = list(facts(data))
        for fact in stored:
            memory.add(
                fact.text,
                user_id=fact.conversation,
                infer=False,
                observed_at=fact.observed_at,
                metadata={"evidence": list(fact.evidence)},
            )
        return len(stored)
    sessions: dict[tuple[str, int], list] = {}
    for turn in turns(data):
        sessions.setdefault((turn.conversation, turn.session), []).append(turn)
    for (conversation, _), batch in sessions.items():
        memory.add(
            [{"role": "user", "content": t.text, "name": t.speaker, "id": t.dia_id} for t in batch],
            user_id=conversation,
            infer=False,
            observed_at=batch[0].observed_at,
        )
    return sum(len(b) for b in sessions.values())


def cited(hit: dict[str, Any]) -> tuple[str, ...]:
    """The turn ids a result stands for: a stored turn's own id, or those a fact cites."""
    evidence = (hit.get("metadata") or {}).get("evidence")
    if evidence:
        return tuple(evidence)
    return tuple(hit.get("source_message_ids") or ())[:1]


def run_memoweave(
    data: list[dict],
    config: str | None,
    home: str,
    shape: str,
    capture: Path | None,
    rerank: bool = False,
) -> list[dict[str, Any]]:
    """Ingest and query with memoweave; return its summary and the dense-only baseline's
    (plain cosine over the same store and embedder, read from the same searches), and
    with ``rerank`` memoweave's with ``search(rerank=True)``."""
    os.environ["MEMOWEAVE_HOME"] = home
    from memoweave import Memory

    memory = Memory(memory_config(config, rerank))
    start = time.perf_counter()
    stored = ingest(memory, data, shape)
    ingest_s = time.perf_counter() - start
    rows, dense_rows, latencies, cpu = [], [], [], []
    rerank_rows, rerank_cpu = [], []
    out = open_capture(capture)
    for question in questions(data):
        t0, c0 = time.perf_counter(), time.process_time()
        hits = memory.search(question.question, user_id=question.conversation, top_k=max(KS))
        latencies.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        rows.append((question, score_cited(question, [cited(h) for h in hits["results"]])))
        reranked: list[dict[str, Any]] = []
        if rerank:
            c0 = time.process_time()
            reranked = memory.search(
                question.question,
                user_id=question.conversation,
                top_k=max(KS),
                rerank=True,
                explain=True,
            )["results"]
            rerank_cpu.append((time.process_time() - c0) * 1000)
            cited_hits = [cited(h) for h in reranked]
            rerank_rows.append((question, score_cited(question, cited_hits)))
        pool = explained_pool(memory, question.question, user_id=question.conversation)
        dense_rows.append((question, score_cited(question, [cited(h) for h in dense_order(pool)])))
        wanted = set(question.evidence)
        labels = {h["id"]: int(bool(wanted & set(cited(h)))) for h in pool}
        append_capture(out, question.conversation, question.question, pool, labels, reranked)
    if out is not None:
        out.close()
    memory.close()
    common = {"shape": shape, "memories": stored, "questions": len(rows)}
    reranked_result = {
        "system": RERANK_SYSTEM,
        "stack": "memoweave + search(rerank=True), reranker "
        + reranker_name(memory_config(config, rerank)),
        "metrics": summarise(rerank_rows),
        "search_cpu_p50_ms": percentile(rerank_cpu, 50),
        "per_conversation_recall@10": per_conversation(rerank_rows),
        **common,
    }
    return [
        {
            "system": "memoweave",
            "stack": describe_stack(config),
            "metrics": summarise(rows),
            "ingest_ms_per_memory": ingest_s * 1000 / stored,
            "search_p50_ms": percentile(latencies, 50),
            "search_p95_ms": percentile(latencies, 95),
            "search_cpu_p50_ms": percentile(cpu, 50),
            "load_average": os.getloadavg()[0],
            "per_conversation_recall@10": per_conversation(rows),
            **common,
        },
        {
            "system": "dense-only",
            "stack": "cosine similarity alone, same store and embedder",
            "metrics": summarise(dense_rows),
            "per_conversation_recall@10": per_conversation(dense_rows),
            **common,
        },
    ] + ([reranked_result] if rerank else [])


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


def run_peer(name: str, data_path: Path, shape: str, conversations: str | None) -> dict[str, Any]:
    """Run a peer system's script in its own virtualenv (see bench/peers/)."""
    peers = Path(__file__).resolve().parent / "peers"
    setup = peers / f"{name}_env.sh"
    python = subprocess.run(["bash", str(setup)], check=True, capture_output=True, text=True)
    interpreter = python.stdout.strip().splitlines()[-1]
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        out_path = out.name
    script = str(peers / f"{name}_locomo.py")
    subprocess.run(
        [interpreter, script, "--data", str(data_path), "--out", out_path, "--shape", shape]
        + (["--conversations", conversations] if conversations else []),
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
    return [{**r, "from_previous_run": True} for r in kept]


def print_table(results: list[dict[str, Any]]) -> None:
    """One row per system and group."""
    header = (
        f"{'system':<12}{'group':<13}{'n':>5}"
        + "".join(f"{'R@' + str(k):>8}" for k in KS)
        + f"{'all@10':>8}"
    )
    print(header)
    print("-" * len(header))
    for result in results:
        for group, m in result["metrics"].items():
            print(
                f"{result['system']:<12}{group:<13}{int(m['n']):>5}"
                + "".join(f"{m[f'recall@{k}']:>8.3f}" for k in KS)
                + f"{m['all@10']:>8.3f}"
            )
    print()
    for r in results:
        if "search_p50_ms" not in r:
            cpu = r.get("search_cpu_p50_ms")
            print(
                f"{r['system']}: {r.get('stack', '')}"
                + (f"; search CPU p50 {cpu:.1f} ms" if cpu else "")
            )
            continue
        ingest = r.get("ingest_ms_per_memory", r.get("ingest_ms_per_turn", float("nan")))
        print(
            f"{r['system']}: {r.get('stack', '')}; ingest {ingest:.1f} ms/memory; "
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
    ax.set_title(f"LoCoMo evidence recall@10 ({results[0].get('shape', 'turns')})")
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
    parser.add_argument(
        "--shape",
        choices=["turns", "facts"],
        default="turns",
        help="turns: every dialogue turn a memory; facts: every session observation",
    )
    parser.add_argument(
        "--capture", type=Path, help="write every candidate's signals (JSON lines) for fitting"
    )
    parser.add_argument(
        "--rerank",
        action="store_true",
        help=f"also run search(rerank=True) ({RERANK_SYSTEM}): the config's reranker, else the "
        "onnx cross-encoder",
    )
    args = parser.parse_args()
    data = load(args.data)
    if args.out is None:
        suffix = "" if args.shape == "turns" else "_facts"
        suffix += "_" + args.conversations.replace(",", "_") if args.conversations else ""
        args.out = RESULTS / f"locomo_recall{suffix}.json"
    if args.conversations:
        keep = set(args.conversations.split(","))
        data = [sample for sample in data if sample["sample_id"] in keep]
    with tempfile.TemporaryDirectory() as home:
        results = run_memoweave(data, args.config, home, args.shape, args.capture, args.rerank)
    for peer in args.peer:
        results.append(run_peer(peer, args.data, args.shape, args.conversations))
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
