"""Cold start of ``memoweave search``: new processes on a filled home, to the first result.

Each run is a new interpreter running ``memoweave search QUERY --user-id ID --json`` on a
copy of ``--home`` (the original is never opened). It reports, per source tree, the
median and the minimum of: the time to the first byte on stdout (the first result
printed), the time to the process's exit, the CPU time of the process (user + system,
every thread) and its peak RSS. ``--compare DIR`` adds other checkouts of memoweave
(their ``core`` and the ``onnx`` / ``qdrant`` plugins put first on ``PYTHONPATH``, so
they run in this venv); the trees take turns run by run, in alternating order, so a
change in the machine's load hits them alike. Each tree runs on its own copy of the home
(made with ``cp -a --sparse=always`` where GNU cp is there, so Qdrant Edge's sparse flag
files stay sparse), so what one tree's runs leave in the page cache, or drop from it,
does not change another's. The load average is printed with each
table (the machine is shared: compare trees within one run, not across runs).

    .venv/bin/python bench/cold_start.py --home /tmp/p100k --runs 10 \\
        --compare /path/to/another/checkout
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_SEARCH = (
    "import sys; sys.argv[0] = 'memoweave'; import memoweave.cli.main as cli; "
    "getattr(cli, 'run', cli.main)()"  # run(): the console script; older trees: main()
)


def one_run(tree: Path, home: Path, query: str, user_id: str) -> tuple[float, ...]:
    """(first byte s, exit s, CPU s, peak RSS MiB) of one new ``memoweave search``."""
    env = {**os.environ, "MEMOWEAVE_HOME": str(home)}
    env.pop("PYTHONPATH", None)
    if tree != ROOT:
        env["PYTHONPATH"] = os.pathsep.join(
            str(tree / part) for part in ("core", "plugins/onnx", "plugins/qdrant")
        )
    cmd = [sys.executable, "-c", _SEARCH, "search", query, "--user-id", user_id, "--json"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.read(1)
    first_byte = time.perf_counter() - start
    out = first + proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    ended = time.perf_counter() - start
    if status != 0 or b'"results"' not in out:
        raise SystemExit(f"{tree}: search failed: {err.decode(errors='replace')[-500:]}")
    return first_byte, ended, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def copy_home(source: Path, target: Path) -> None:
    """Copy a home, keeping sparse files sparse where GNU cp can (``shutil.copytree``
    writes their holes out as zeros: a shard's null-index flags, 1 MiB each, would then
    be read from disk by every load)."""
    cp = shutil.which("cp")
    if cp is not None:
        done = subprocess.run([cp, "-a", "--sparse=always", str(source), str(target)])
        if done.returncode == 0:
            return
        shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, symlinks=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="a filled memoweave home")
    parser.add_argument("--query", default="What instrument does Matthew play?")
    parser.add_argument("--user-id", default="user-00000")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--compare", type=Path, action="append", default=[])
    args = parser.parse_args()
    trees = [ROOT, *(path.resolve() for path in args.compare)]
    rows: dict[Path, list[tuple[float, ...]]] = {tree: [] for tree in trees}
    with tempfile.TemporaryDirectory(prefix="memoweave-cold-") as scratch:
        homes = copied_homes(args.home, trees, Path(scratch))
        load_before = os.getloadavg()
        for _, tree in alternating(trees, args.runs):
            rows[tree].append(one_run(tree, homes[tree], args.query, args.user_id))
        load_after = os.getloadavg()
    print(f"cold `memoweave search` on {args.home}, {args.runs} runs per tree, medians (min)")
    print("| tree | first result s | exit s | CPU s | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|")
    for tree, runs in rows.items():
        first, ended, cpu, rss = zip(*runs, strict=True)
        print(f"| {tree} | {median_cells(first, ended, cpu)} | {statistics.median(rss):.0f} |")
    print_load(load_before, load_after)


def copied_homes(source: Path, trees: list[Path], scratch: Path) -> dict[Path, Path]:
    """A copy of the home ``source`` under ``scratch`` for each tree."""
    homes = {tree: scratch / f"home-{n}" for n, tree in enumerate(trees)}
    for home in homes.values():
        copy_home(source, home)
    return homes


def alternating(trees: list[Path], runs: int) -> Iterator[tuple[int, Path]]:
    """``(run, tree)`` for each run, the trees in turn, their order reversed every other
    run (so neither tree always goes first)."""
    for run in range(runs):
        for tree in trees if run % 2 == 0 else trees[::-1]:
            yield run, tree


def median_cells(*columns: tuple[float, ...]) -> str:
    """Table cells ``median (min)`` of each column of timings, joined by `` | ``."""
    return " | ".join(f"{statistics.median(c):.3f} ({min(c):.3f})" for c in columns)


def print_load(before: tuple[float, ...], after: tuple[float, ...]) -> None:
    """The line giving the load averages before and after the runs."""
    print(
        "load average before / after: "
        + " / ".join(" ".join(f"{x:.2f}" for x in load) for load in (before, after))
    )


if __name__ == "__main__":
    main()
