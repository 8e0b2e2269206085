"""Fact QA: short distilled facts, answerable and unanswerable questions about them.

``bench/data/fact_qa.json`` holds a few personas, ~40 short facts each (the shape
``add(infer=True)`` stores) and questions that paraphrase their answer or share a
misleading word with a wrong fact, plus questions no fact answers. Each persona's facts
are stored as memories of its own user (``infer=False``, one ``add`` per fact, all
observed at one moment; ``--per-moment N``: each run of N facts at a moment of its own,
as if one ``add(infer=True)`` had distilled them from one conversation); every question
is asked in that scope. Per system and split (``dev`` personas may be used to
choose settings, ``heldout`` ones only to check them):

- top-1: the first result answers the question (answerable questions);
- hit@3: an answer is among the first three;
- AUC: how often an answerable question's top score beats an unanswerable one's;
- with the recommended ``threshold`` (memoweave): answerable questions whose first result
  still answers them ("kept"), unanswerable ones that return nothing ("dropped").

"dense-only" is plain cosine similarity over the same store and embedder; ``--peer mem0``
runs mem0 in its own virtualenv (``bench/peers/``) on the same data.

    .venv/bin/python bench/fact_qa.py
    .venv/bin/python bench/fact_qa.py --peer mem0 --capture results/cap_fact_qa.jsonl
    .venv/bin/python bench/fact_qa.py --per-moment 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_eval import (
    POOL,
    RERANK_SYSTEM,
    append_capture,
    auc,
    dense_order,
    explained_pool,
    memory_config,
    open_capture,
    reranker_of,
)

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "fact_qa.json"
RESULTS = HERE / "results"
OBSERVED_AT = datetime(2024, 6, 1, 12, tzinfo=timezone.utc)


def observed_at(index: int, per_moment: int) -> str:
    """The observation time of a persona's ``index``-th fact: one moment for all facts
    (``per_moment`` 0), else a minute per run of ``per_moment`` facts."""
    minutes = index // per_moment if per_moment > 0 else 0
    return (OBSERVED_AT + timedelta(minutes=minutes)).isoformat()


def load(path: Path = DATA) -> list[dict[str, Any]]:
    """The personas, each with ``facts`` (id -> text) and ``questions``."""
    return json.loads(path.read_text(encoding="utf-8"))["personas"]


def summarise(rows: Sequence[dict[str, Any]], threshold: float | None) -> dict[str, Any]:
    """Metrics of one system over ``rows`` (one per question: ``answers``, ``ranked`` fact
    ids, ``top_score``)."""
    answerable = [r for r in rows if r["answers"]]
    unanswerable = [r for r in rows if not r["answers"]]
    top1 = [bool(r["ranked"]) and r["ranked"][0] in r["answers"] for r in answerable]
    hit3 = [bool(set(r["ranked"][:3]) & set(r["answers"])) for r in answerable]
    out: dict[str, Any] = {
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "top1": statistics.fmean(top1) if top1 else float("nan"),
        "hit@3": statistics.fmean(hit3) if hit3 else float("nan"),
        "auc": auc([r["top_score"] for r in answerable], [r["top_score"] for r in unanswerable]),
    }
    if threshold is not None:
        out["threshold"] = threshold
        out["kept"] = statistics.fmean(
            ok and r["top_score"] >= threshold for ok, r in zip(top1, answerable, strict=True)
        )
        out["dropped"] = statistics.fmean(r["top_score"] < threshold for r in unanswerable)
    return out


def run_memoweave(
    personas: list[dict[str, Any]],
    config: str | None,
    home: str,
    capture: Path | None,
    rerank: bool = False,
    per_moment: int = 0,
) -> list[dict[str, Any]]:
    """memoweave and dense-only rows, per question (and memoweave with its reranker)."""
    os.environ["MEMOWEAVE_HOME"] = home
    from memoweave import Memory

    memory = Memory(memory_config(config, rerank))
    ids: dict[str, str] = {}
    start = time.perf_counter()
    for persona in personas:
        for index, (key, text) in enumerate(persona["facts"].items()):
            when = observed_at(index, per_moment)
            out = memory.add(text, user_id=persona["id"], infer=False, observed_at=when)
            ids[out["results"][0]["id"]] = key
    ingest_ms = (time.perf_counter() - start) * 1000 / len(ids)
    rows: dict[str, list[dict[str, Any]]] = {"memoweave": [], "dense-only": []}
    if rerank:
        rows[RERANK_SYSTEM] = []
    latencies: list[float] = []
    rerank_latencies: list[float] = []
    capture_file = open_capture(capture)
    for persona in personas:
        for q in persona["questions"]:
            base = {"persona": persona["id"], "split": persona["split"], "answers": q["a"]}
            t0 = time.perf_counter()
            hits = memory.search(q["q"], user_id=persona["id"], top_k=10)["results"]
            latencies.append((time.perf_counter() - t0) * 1000)
            pool = explained_pool(memory, q["q"], user_id=persona["id"])
            dense = dense_order(pool)
            systems = [
                ("memoweave", hits, hits[0]["score"] if hits else 0.0),
                ("dense-only", dense, dense[0]["explain"]["dense"]["score"] if dense else 0.0),
            ]
            reranked: list[dict[str, Any]] = []
            if rerank:
                t0 = time.process_time()
                reranked = memory.search(
                    q["q"], user_id=persona["id"], top_k=POOL, rerank=True, explain=True
                )["results"]
                rerank_latencies.append((time.process_time() - t0) * 1000)
                top = reranked[0]["score"] if reranked else 0.0
                systems.append((RERANK_SYSTEM, reranked, top))
            for name, ranked, top in systems:
                keys = [ids[h["id"]] for h in ranked]
                rows[name].append({**base, "ranked": keys, "top_score": top, "q": q["q"]})
            labels = {h["id"]: int(ids[h["id"]] in q["a"]) for h in pool}
            append_capture(capture_file, persona["split"], q["q"], pool, labels, reranked)
    if capture_file is not None:
        capture_file.close()
    memory.close()
    for row in rows["memoweave"]:
        row["latency_p50_ms"] = statistics.median(latencies)
    for row in rows.get(RERANK_SYSTEM, []):
        row["cpu_p50_ms"] = statistics.median(rerank_latencies)
    return [{"system": name, "ingest_ms": ingest_ms, "rows": r} for name, r in rows.items()]


def run_peer(name: str) -> dict[str, Any]:
    """A peer's rows, from its script in its own virtualenv (see bench/peers/)."""
    peers = HERE / "peers"
    python = subprocess.run(
        ["bash", str(peers / f"{name}_env.sh")], check=True, capture_output=True, text=True
    )
    interpreter = python.stdout.strip().splitlines()[-1]
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        out_path = Path(out.name)
    subprocess.run(
        [
            interpreter,
            str(peers / f"{name}_fact_qa.py"),
            "--data",
            str(DATA),
            "--out",
            str(out_path),
        ],
        check=True,
        env={**os.environ, "MEM0_TELEMETRY": "False", "HF_HUB_OFFLINE": "1"},
    )
    return json.loads(out_path.read_text())


def recommended_thresholds(similarities: bool) -> tuple[float, float]:
    """memoweave's documented thresholds: the first pass's, and the reranked search's (the
    first pass's again with a reranker of similarities, which keeps its calibration)."""
    from memoweave.retrieval.profiles import RECOMMENDED_RERANKED_THRESHOLD, RECOMMENDED_THRESHOLD

    reranked = RECOMMENDED_THRESHOLD if similarities else RECOMMENDED_RERANKED_THRESHOLD
    return RECOMMENDED_THRESHOLD, reranked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="memoweave YAML config (default: embedded stack)")
    parser.add_argument("--peer", action="append", default=[], choices=["mem0"])
    parser.add_argument("--capture", type=Path, help="write every candidate's signals")
    parser.add_argument(
        "--rerank",
        action="store_true",
        help=f"also run search(rerank=True) ({RERANK_SYSTEM}): the config's reranker, else the "
        "onnx cross-encoder",
    )
    parser.add_argument(
        "--per-moment",
        type=int,
        default=0,
        metavar="N",
        help="store each run of N facts at a moment of its own (default: one moment)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "fact_qa.json")
    args = parser.parse_args()
    if args.per_moment < 0:
        parser.error("--per-moment must be 0 or more")
    personas = load()
    with tempfile.TemporaryDirectory() as home:
        systems = run_memoweave(
            personas, args.config, home, args.capture, args.rerank, args.per_moment
        )
    systems.extend(run_peer(peer) for peer in args.peer)
    provider, similarities = reranker_of(memory_config(args.config, args.rerank))
    threshold, reranked_threshold = recommended_thresholds(similarities)
    results = []
    header = f"{'system':<12}{'split':<9}{'ans':>5}{'unans':>6}{'top-1':>8}{'hit@3':>8}{'AUC':>7}"
    print(header + f"{'kept':>7}{'dropped':>9}")
    print("-" * (len(header) + 16))
    for system in systems:
        summary = {}
        for split in ("dev", "heldout", "all"):
            rows = [r for r in system["rows"] if split in ("all", r["split"])]
            cut = {"memoweave": threshold, RERANK_SYSTEM: reranked_threshold}.get(system["system"])
            m = summary[split] = summarise(rows, cut)
            extra = f"{m['kept']:>7.3f}{m['dropped']:>9.3f}" if cut is not None else ""
            print(
                f"{system['system']:<12}{split:<9}{m['answerable']:>5}{m['unanswerable']:>6}"
                f"{m['top1']:>8.3f}{m['hit@3']:>8.3f}{m['auc']:>7.3f}" + extra
            )
        results.append({**system, "summary": summary})
    print(
        f"\nrecommended threshold {threshold} ({RERANK_SYSTEM}: {reranked_threshold}); "
        f"load average {os.getloadavg()[0]:.1f}; "
        f"memoweave ingest {systems[0]['ingest_ms']:.1f} ms/fact"
    )
    for system in systems:
        if system["system"] == RERANK_SYSTEM:
            cpu = system["rows"][0]["cpu_p50_ms"]
            print(f"{RERANK_SYSTEM}: reranker {provider}, search CPU p50 {cpu:.1f} ms (included)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
