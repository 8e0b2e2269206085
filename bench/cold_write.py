"""Cold writes: new processes running ``memoweave add --no-infer`` and ``memoweave delete``
on a filled home, to their exit.

Each run starts two new interpreters on a copy of ``--home`` (the original is never
opened): ``memoweave add TEXT --user-id <a new user> --no-infer --json``, then
``memoweave delete ID --json`` of a memory the home holds (no ``--user-id``: the command
names the memory only), a different memory each run. It reports, per source tree and
command, the median and the minimum of the wall time to the process's exit, its CPU
time (user + system, every thread) and its peak RSS. ``--compare DIR`` adds other
checkouts of memoweave, run the way :mod:`cold_start` runs them (their ``core`` and the
``onnx`` / ``qdrant`` plugins first on ``PYTHONPATH``), each on its own copy of the home,
the trees taking turns run by run in alternating order. The load average is printed
with the table (compare trees within one run, not across runs).

    .venv/bin/python bench/cold_write.py --home /tmp/p1m --runs 6 --compare /tmp/before
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cold_start import _SEARCH as _CLI
from cold_start import ROOT, alternating, copied_homes, median_cells, print_load


def one_command(tree: Path, home: Path, args: list[str]) -> tuple[float, float, float]:
    """(exit s, CPU s, peak RSS MiB) of one new ``memoweave ARGS`` process."""
    env = {**os.environ, "MEMOWEAVE_HOME": str(home)}
    env.pop("PYTHONPATH", None)
    if tree != ROOT:
        env["PYTHONPATH"] = os.pathsep.join(
            str(tree / part) for part in ("core", "plugins/onnx", "plugins/qdrant")
        )
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", _CLI, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    ended = time.perf_counter() - start
    if status != 0:
        raise SystemExit(
            f"{tree}: memoweave {args[0]} failed: {err.decode(errors='replace')[-500:]}"
        )
    return ended, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def memory_ids(home: Path, n: int) -> list[str]:
    """``n`` memories of different users the home's history records as added, not deleted."""
    conn = sqlite3.connect(f"file:{home / 'history.db'}?mode=ro", uri=True)
    try:
        (total,) = conn.execute("SELECT max(rowid) FROM history").fetchone()
        step = max(1, (total or 0) // (n * 4))  # spread over the home, small ones too
        rows = conn.execute(
            "SELECT memory_id, user_id FROM history WHERE event = 'ADD' AND status = "
            "'committed' AND rowid % ? = 0 LIMIT ?",
            (step, n * 4),
        ).fetchall()
    finally:
        conn.close()
    picked: dict[str, str] = {}
    for memory_id, user_id in rows:
        picked.setdefault(user_id, memory_id)
    if len(picked) < n:
        raise SystemExit(f"{home}: found {len(picked)} memories to delete, {n} needed")
    return list(picked.values())[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="a filled memoweave home")
    parser.add_argument("--runs", type=int, default=6)
    parser.add_argument("--compare", type=Path, action="append", default=[])
    args = parser.parse_args()
    trees = [ROOT, *(path.resolve() for path in args.compare)]
    doomed = memory_ids(args.home, args.runs)
    rows: dict[tuple[Path, str], list[tuple[float, ...]]] = {
        (tree, cmd): [] for tree in trees for cmd in ("add", "delete")
    }
    with tempfile.TemporaryDirectory(prefix="memoweave-cold-write-") as scratch:
        homes = copied_homes(args.home, trees, Path(scratch))
        load_before = os.getloadavg()
        for run, tree in alternating(trees, args.runs):
            add = ["add", f"I bought a red bicycle, number {run}", "--no-infer", "--json"]
            add += ["--user-id", f"cold-write-user-{run}"]
            rows[tree, "add"].append(one_command(tree, homes[tree], add))
            delete = ["delete", doomed[run], "--json"]
            rows[tree, "delete"].append(one_command(tree, homes[tree], delete))
        load_after = os.getloadavg()
    print(f"cold `memoweave add` / `memoweave delete` on {args.home}, {args.runs} runs per tree,")
    print("medians (min)")
    print("| tree | command | exit s | CPU s | peak RSS MiB |")
    print("|---|---|---:|---:|---:|")
    for (tree, cmd), runs in rows.items():
        ended, cpu, rss = zip(*runs, strict=True)
        print(f"| {tree} | {cmd} | {median_cells(ended, cpu)} | {statistics.median(rss):.0f} |")
    print_load(load_before, load_after)


if __name__ == "__main__":
    main()
