"""Replay the fact fusion offline on captured LoCoMo search pools, through the core's code.

``--dump`` runs the ``--shape facts`` ingest of ``locomo_recall.py`` once and keeps, for
every question, its 200-candidate ``explain`` pool (each candidate's signal values,
observation time and cited turns) in ``results/fusion_pools.json.gz``. A replay then
rebuilds each search's candidates as the retriever chooses them (the dense and keyword top
``candidates``), fuses them with the core's own functions
(:func:`memoweave.retrieval.fusion.fuse_calibrated`, then the neighbour pass of
:func:`memoweave.retrieval.neighbours.neighbour_scores`) and the fact profile, weights
overridden by ``--set``, and prints recall@5/10/20 of the evidence turns per half. With
the shipped profile it gives the bench's own recall, so a change of weights is measured
in seconds instead of a full run:

    .venv/bin/python bench/fusion_replay.py --dump
    .venv/bin/python bench/fusion_replay.py --set keyword=4.5 --set neighbour=1.5
    .venv/bin/python bench/fusion_replay.py --candidates 100
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from statistics import fmean
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_data import DEFAULT_DATA, KS, Question, load, questions, score_cited
from locomo_recall import cited, ingest
from retrieval_eval import explained_pool, memory_config

HERE = Path(__file__).resolve().parent
POOLS = HERE / "results" / "fusion_pools.json.gz"
DEV = ("conv-26", "conv-30", "conv-41")
"""The development half; the other conversations are the held-out one."""
FUSED = ("dense", "keyword", "entity", "time")
"""The signals of the first pass the replay fuses (their captured values)."""


def dump(data_path: Path, out: Path) -> int:
    """Ingest the facts shape and write every question's explained pool; how many."""
    data = load(data_path)
    with tempfile.TemporaryDirectory() as home:
        os.environ["MEMOWEAVE_HOME"] = home
        from memoweave import Memory

        memory = Memory(memory_config(None, False))
        ingest(memory, data, "facts")
        searches = []
        for question in questions(data):
            pool = explained_pool(memory, question.question, user_id=question.conversation)
            searches.append(
                {
                    "conversation": question.conversation,
                    "question": question.question,
                    "evidence": list(question.evidence),
                    "category": question.category,
                    "pool": [_candidate(hit) for hit in pool],
                }
            )
        memory.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8") as f:
        json.dump(searches, f)
    return len(searches)


def _candidate(hit: dict[str, Any]) -> dict[str, Any]:
    signals = {name: [s["score"], s.get("value", s["score"])] for name, s in hit["explain"].items()}
    observed = hit.get("observed_at")
    return {
        "id": hit["id"],
        "cited": list(cited(hit)),
        "observed_ts": datetime.fromisoformat(observed).timestamp() if observed else None,
        "signals": signals,
    }


def rank(search: dict[str, Any], profile: Any, candidates: int) -> list[str]:
    """The search's memory ids in the order the retriever's fusion gives them."""
    from memoweave.retrieval.candidates import Candidate, Signal
    from memoweave.retrieval.fusion import fuse_calibrated
    from memoweave.retrieval.neighbours import neighbour_scores
    from memoweave.retrieval.profiles import KIND_FACT, MEMORY_KIND_KEY

    pool = search["pool"]
    dense = sorted((c for c in pool if "dense" in c["signals"]),
                   key=lambda c: -c["signals"]["dense"][0])[:candidates]  # fmt: skip
    keyword = sorted((c for c in pool if c["signals"].get("keyword", [0])[0] > 0),
                     key=lambda c: -c["signals"]["keyword"][0])[:candidates]  # fmt: skip
    chosen = {c["id"]: c for c in [*dense, *keyword]}
    weights = profile.weights()
    fused: dict[str, Candidate] = {}
    for memory_id, c in chosen.items():
        payload = {MEMORY_KIND_KEY: KIND_FACT, "observed_ts": c["observed_ts"]}
        cand = fused[memory_id] = Candidate(memory_id, payload)
        for name in FUSED:
            if name in c["signals"]:
                score, value = c["signals"][name]
                cand.signals[name] = Signal(score, value=value)
        fuse_calibrated(cand, weights, profile.bias)
    for memory_id, near in neighbour_scores(fused).items():
        cand = fused[memory_id]
        cand.signals["neighbour"] = Signal(near, value=near)
        fuse_calibrated(cand, weights, profile.bias)
    return [c.id for c in sorted(fused.values(), key=lambda c: (-c.score, c.id))]


def replay(searches: list[dict[str, Any]], profile: Any, candidates: int) -> dict[str, dict]:
    """Mean recall@k per half (``dev``, ``heldout``) and over ``all``."""
    rows: dict[str, list[dict[str, float]]] = {"dev": [], "heldout": [], "all": []}
    for search in searches:
        cites = {c["id"]: c["cited"] for c in search["pool"]}
        ranked = [cites[i] for i in rank(search, profile, candidates)]
        question = Question(search["conversation"], search["question"],
                            tuple(search["evidence"]), search["category"])  # fmt: skip
        scores = score_cited(question, ranked)
        half = "dev" if search["conversation"] in DEV else "heldout"
        rows[half].append(scores)
        rows["all"].append(scores)
    return {
        half: {f"recall@{k}": fmean(r[f"recall@{k}"] for r in found) for k in KS}
        for half, found in rows.items()
        if found
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", action="store_true", help="capture the pools first")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--pools", type=Path, default=POOLS)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a fact-profile weight (bias, dense, keyword, entity, time, neighbour)",
    )
    parser.add_argument("--candidates", type=int, help="per signal (default: the setting's)")
    args = parser.parse_args()
    if args.dump:
        print(f"captured {dump(args.data, args.pools)} searches in {args.pools}")
    if not args.pools.exists():
        parser.error(f"{args.pools} does not exist: run with --dump first")
    from memoweave.config.sections import RetrievalConfig
    from memoweave.retrieval.profiles import KIND_FACT, PROFILES

    profile = PROFILES[KIND_FACT]
    names = {f.name for f in dataclasses.fields(profile)} - {"reranked"}
    changes: dict[str, Any] = {}
    for item in args.set:
        name, _, value = item.partition("=")
        if name not in names:
            parser.error(f"--set {item}: the fact profile has {sorted(names)}")
        changes[name] = float(value)
    candidates = args.candidates or RetrievalConfig().candidates
    with gzip.open(args.pools, "rt", encoding="utf-8") as f:
        searches = json.load(f)
    rows = [("shipped fact profile", profile)]
    if changes:
        label = ", ".join(f"{k}={v:g}" for k, v in changes.items())
        rows.append((label, dataclasses.replace(profile, **changes)))
    print(f"{len(searches)} searches, {candidates} candidates per signal")
    print(f"{'profile':<34}{'half':<9}" + "".join(f"{'R@' + str(k):>8}" for k in KS))
    for label, chosen in rows:
        for half, recall in replay(searches, chosen, candidates).items():
            values = "".join(f"{recall[f'recall@{k}']:>8.4f}" for k in KS)
            print(f"{label:<34}{half:<9}{values}")


if __name__ == "__main__":
    main()
