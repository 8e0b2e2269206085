"""memoweave vs mem0 at scale, same machine, same run, same all-MiniLM-L6-v2 weights.

Systems: ``memoweave`` (the embedded default: Qdrant Edge + int8 ONNX MiniLM + SQLite
history), ``memoweave-sqlite-vec``, ``memoweave-milvus-lite``, ``memoweave-memory`` (the
in-memory store) and ``mem0`` (2.2.1, its default local Qdrant on disk, in its own venv
``bench/.venv-mem0``, see ``peers/mem0_env.sh``). Layouts: N memories in one scope
(``1000``), or S scopes x M memories (``10000x100``). Every (system, layout) runs in a new
process (``peer_memoweave.py`` / ``peers/mem0_peer.py``), so RSS is its own; the phases
are in ``peer_data.run_phases``:

- bulk fill through ``add(infer=False)``, 100 messages per call; the corpus vectors come
  from a cache embedded once with the default embedder, so filling 100k memories does not
  re-run the model (the timed phases below embed for real);
- ingest of new texts with ``infer=False``: one memory per call, then batched (100 per
  call): memories/s and ms per memory;
- searches (top 10, query embedding included): p50/p95 wall and process-CPU ms, and the
  p50 of a search right after a write to the same scope (a chat app's steady state);
- ``add(infer=True)`` of LoCoMo exchanges with ``add_cost.py``'s scripted LLM (200 ms per
  call): wall, overhead beyond the LLM, LLM calls and prompt tokens per add;
- RSS of the process tree and peak RSS, size of the home on disk;
- cold start: a new process running ``memoweave search`` (mem0: import, construct, search)
  on the home just written, median of 3.

    .venv/bin/python bench/peer.py --quick          # 1k, 100 x 10: minutes on an idle machine
    nice .venv/bin/python bench/peer.py             # 1k, 10k, 100k, 10,000 x 100 (hours)
    .venv/bin/python bench/peer.py --layouts 10000 --systems memoweave,mem0
    nice .venv/bin/python bench/peer.py --layouts 10000x100 --filled ~/peer-fills
        # saves memoweave's filled home; the next run with --filled copies it, no fill

mem0 is slow at scale (its local Qdrant scans every point in Python): its fill stops after
``--mem0-cap`` seconds and the table says where it stopped. Writes
``bench/results/peer.json``, ``peer.md`` and ``peer.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from add_cost_data import DEFAULT_DATA
from peer_data import RESULTS, Layout, load_average, pool_size, write_json

BENCH = Path(__file__).resolve().parent
SYSTEMS = ("memoweave", "memoweave-sqlite-vec", "memoweave-milvus-lite", "memoweave-memory", "mem0")
FULL = "1000,10000,100000,10000x100"
QUICK = "1000,100x10"
# (label, key, better): better = "low" or "high"; ratios are always "times better"
METRICS: tuple[tuple[str, str, str, str], ...] = (
    ("batched ingest, memories/s", "ingest_batch_per_s", "high"),
    ("one-per-call ingest, ms/memory", "ingest_single_ms", "low"),
    ("search p50 ms", "search_p50_ms", "low"),
    ("search p95 ms", "search_p95_ms", "low"),
    ("search CPU ms p50", "search_cpu_p50_ms", "low"),
    ("search major page faults (mean)", "search_major_faults", "low"),
    ("search right after a write, p50 ms", "search_after_write_p50_ms", "low"),
    ("infer add: overhead p50 ms", "infer_overhead_ms_p50", "low"),
    ("infer add: wall p50 ms", "infer_wall_ms_p50", "low"),
    ("infer add: LLM calls", "infer_llm_calls_per_add", "low"),
    ("infer add: prompt tokens", "infer_prompt_tokens_per_add", "low"),
    ("RSS MiB", "rss_mb", "low"),
    ("disk MiB", "disk_mb", "low"),
    ("cold start s", "cold_start_s", "low"),
)


def number(value: float) -> str:
    """Three significant figures at most, thousands separated."""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def worker_command(system: str, layout: Layout, args: argparse.Namespace, out: Path) -> list[str]:
    """The command line of one (system, layout) run."""
    common = [
        "--layout", layout.key, "--out", str(out), "--single", str(args.single),
        "--batches", str(args.batches), "--queries", str(args.queries),
        "--infer", str(args.infer), "--data", str(args.data),
    ]  # fmt: skip
    if system == "mem0":
        from add_cost import mem0_python

        python = mem0_python()
        if python is None:
            raise RuntimeError("bench/.venv-mem0 could not be created (see peers/mem0_env.sh)")
        script = BENCH / "peers" / "mem0_peer.py"
        return [str(python), str(script), *common, "--time-cap", str(args.mem0_cap)]
    script = BENCH / "peer_memoweave.py"
    filled = ["--filled", str(args.filled)] if args.filled else []
    cmd = [sys.executable, str(script), "--system", system, *common, *filled]
    return [*cmd, "--time-cap", str(args.cap)]


def run_one(system: str, layout: Layout, args: argparse.Namespace) -> dict[str, Any]:
    """Run one worker; its figures, or the error it ended with."""
    out = RESULTS / "peer-runs" / f"{system}-{layout.key}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    started = time.perf_counter()
    try:
        cmd = worker_command(system, layout, args, out)
    except RuntimeError as exc:
        return {"system": system, "layout": layout.key, "error": str(exc)}
    env = {**os.environ, "MEM0_TELEMETRY": "False", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not out.exists():
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"system": system, "layout": layout.key, "error": tail}
    result = json.loads(out.read_text())
    result["run_s"] = time.perf_counter() - started
    return result


def ratio(ours: float | None, theirs: float | None, better: str) -> str:
    """``xN``: how many times better than mem0 (N < 1: worse)."""
    if not ours or not theirs:
        return ""
    times = theirs / ours if better == "low" else ours / theirs
    return f" (x{number(times)})"


def markdown(results: list[dict[str, Any]], layouts: list[Layout], systems: list[str]) -> str:
    """One table per layout: a row per metric, a column per system, ratios to mem0."""
    lines = []
    for layout in layouts:
        rows = {r["system"]: r for r in results if r["layout"] == layout.key}
        shown = [s for s in systems if s in rows]
        if not shown:
            continue
        peer = rows.get("mem0", {})
        lines += [f"### {layout.label}", ""]
        notes = []
        for system in shown:
            r = rows[system]
            if r.get("from_previous_run"):
                notes.append(
                    f"- {system}: from an earlier run (load average {r.get('load_average')})"
                )
            if r.get("fill_reused_from"):
                notes.append(f"- {system}: home copied from a saved fill (`--filled`)")
            if "error" in r:
                notes.append(f"- {system}: failed: `{r['error']}`")
            elif r.get("filled", layout.total) < layout.total:
                notes.append(
                    f"- {system}: fill stopped by its time cap at {r['filled']:,} of "
                    f"{layout.total:,} memories; its figures are at that size"
                )
        lines.append("| metric | " + " | ".join(shown) + " |")
        lines.append("|---|" + "---:|" * len(shown))
        comparable = "error" not in peer and peer.get("filled", layout.total) >= layout.total
        for label, key, better in METRICS:
            cells = []
            for system in shown:
                value = rows[system].get(key)
                if value is None:
                    cells.append("-")
                    continue
                cell = number(value)
                if system != "mem0" and comparable:
                    cell += ratio(value, peer.get(key), better)
                cells.append(cell)
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines += ["", *notes, ""] if notes else [""]
    lines.append(
        "(xN) = N times better than mem0 in the same run (lower time, memory or disk; "
        "higher throughput); x < 1 is worse. Ratios are shown only where mem0 loaded the "
        "whole layout."
    )
    return "\n".join(lines) + "\n"


def plot(results: list[dict[str, Any]], path: Path) -> None:
    """Search p50, batched ingest and RSS against memories held, log scales."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = (
        ("search_p50_ms", "search p50 (ms)"),
        ("ingest_batch_per_s", "batched ingest (memories/s)"),
        ("rss_mb", "RSS (MiB)"),
    )
    fig, axes = plt.subplots(1, len(panels), figsize=(15, 4.2))
    for ax, (key, title) in zip(axes, panels, strict=True):
        for color, system in enumerate(SYSTEMS):
            for scoped, style in ((False, "-o"), (True, "--s")):
                rows = sorted(
                    (
                        r
                        for r in results
                        if r["system"] == system
                        and key in r
                        and (Layout.parse(r["layout"]).scopes > 1) == scoped
                    ),
                    key=lambda r: r["filled"],
                )
                if rows:
                    label = system + (" (many scopes)" if scoped else "")
                    xs, ys = [r["filled"] for r in rows], [r[key] for r in rows]
                    ax.plot(xs, ys, style, color=f"C{color}", label=label)
        if key == "search_p50_ms":
            ax.axhline(20, color="grey", linestyle=":", linewidth=1, label="20 ms target")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("memories held")
        ax.set_title(title)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def previous_results(layouts: list[Layout], systems: list[str]) -> list[dict[str, Any]]:
    """The results of the last ``peer.json`` that this run does not redo (marked
    ``from_previous_run``: another run, maybe at another load)."""
    path = RESULTS / "peer.json"
    if not path.exists():
        return []
    redo = {(s, layout.key) for s in systems for layout in layouts}
    kept = [
        r for r in json.loads(path.read_text())["results"] if (r["system"], r["layout"]) not in redo
    ]
    for r in kept:
        r["from_previous_run"] = True
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 100 x 10, small phases")
    parser.add_argument("--layouts", help=f"comma list (default {FULL}; quick {QUICK})")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help=f"subset of {SYSTEMS}")
    parser.add_argument("--single", type=int, help="one-memory adds timed (200; quick 20)")
    parser.add_argument("--batches", type=int, help="100-message adds timed (10; quick 1)")
    parser.add_argument("--queries", type=int, help="searches timed (200; quick 30)")
    parser.add_argument("--infer", type=int, help="infer=True adds timed (30; quick 5)")
    parser.add_argument("--cap", type=float, default=0, help="fill time cap (s), memoweave")
    parser.add_argument("--mem0-cap", type=float, help="fill time cap (s), mem0 (900; quick 90)")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo file")
    parser.add_argument(
        "--filled",
        type=Path,
        help="folder of saved fills: memoweave's homes are saved there right after the fill "
        "and reused (copied) by later runs, which skip the fill (an hour at 10,000 x 100)",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep peer.json's results of the other (system, layout) pairs (marked)",
    )
    args = parser.parse_args()
    quick = args.quick
    for name, full, small in (("single", 200, 20), ("batches", 10, 1), ("queries", 200, 30)):
        if getattr(args, name) is None:
            setattr(args, name, small if quick else full)
    args.infer = args.infer if args.infer is not None else (5 if quick else 30)
    args.mem0_cap = args.mem0_cap if args.mem0_cap is not None else (90 if quick else 900)
    layouts = [Layout.parse(x) for x in (args.layouts or (QUICK if quick else FULL)).split(",")]
    systems = [s for s in args.systems.split(",") if s]
    unknown = set(systems) - set(SYSTEMS)
    if unknown:
        parser.error(f"unknown systems {sorted(unknown)}; choose from {SYSTEMS}")
    if not args.data.exists():
        print(f"note: {args.data} missing: the infer=True phase is skipped")

    biggest = max(pool_size(layout) for layout in layouts)
    print(f"embedding cache for {biggest:,} facts ...", flush=True)
    subprocess.run(
        [sys.executable, str(BENCH / "peer_memoweave.py"), "--cache", str(biggest)], check=True
    )
    results = previous_results(layouts, systems) if args.merge else []
    document = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "load_average_start": load_average(),
        "quick": quick,
        "results": results,
    }
    for layout in layouts:
        for system in systems:
            print(f"{layout.label:<24} {system:<24}", end=" ", flush=True)
            result = run_one(system, layout, args)
            results.append(result)
            done = result.get("error") or (
                f"search p50 {result.get('search_p50_ms', float('nan')):.1f} ms, "
                f"batched {result.get('ingest_batch_per_s', 0):.0f}/s, "
                f"RSS {result.get('rss_mb', 0):.0f} MiB, load {result.get('load_average')}"
            )
            print(done, flush=True)
            write_json(RESULTS / "peer.json", document)
    document["load_average_end"] = load_average()
    write_json(RESULTS / "peer.json", document)
    shown_layouts = sorted(
        {Layout.parse(r["layout"]) for r in results}, key=lambda x: (x.scopes > 1, x.total)
    )
    table = markdown(
        results, shown_layouts, [s for s in SYSTEMS if any(r["system"] == s for r in results)]
    )
    load = f"load average at start {document['load_average_start']}, at end {load_average()}"
    (RESULTS / "peer.md").write_text(table + f"\n{load}\n", encoding="utf-8")
    print(table + "\n" + load)
    plot(results, RESULTS / "peer.png")
    print(f"wrote {RESULTS / 'peer.json'}, peer.md and peer.png")


if __name__ == "__main__":
    main()
