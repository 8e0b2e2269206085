"""Concurrency: memoweave's ``AsyncMemory`` / shared ``Memory`` against mem0's, same run.

Three scenarios, each in a fresh process and a fresh home per system, both systems on
their embedded default stack (memoweave: Qdrant Edge + int8 ONNX MiniLM; mem0 2.2.1:
Qdrant local + sentence-transformers MiniLM, in its own venv ``bench/.venv-mem0``) with
a scripted LLM answering one fact per message after a fixed latency:

1. **burst**: 100 concurrent ``add`` calls to 10 scopes, LLM 200 ms. Target: wall
   <= 1.5 s (serial would be 20 s), every memory present afterwards.
2. **loaded_search**: search p95 over 200 memories while 20 adds with a 2 s LLM are in
   flight, against the idle p95. Target: within 2x.
3. **soak**: 8 threads on ONE sync ``Memory``, alternating adds (LLM 200 ms) and
   searches for 30 s (10 s with ``--quick``). Target: 0 errors, 0 lost writes.

    .venv/bin/python bench/concurrency.py [--quick] [--only burst,soak] [--systems memoweave]

Prints a table, writes ``bench/results/concurrency.json``. Run under ``nice`` on a shared
machine; the load average is recorded with every figure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from concurrency_data import REPO, RESULTS, Plan, load_average, write_json

SCENARIOS = ("burst", "loaded_search", "soak")
SIDES = {
    "memoweave": (REPO / ".venv" / "bin" / "python", REPO / "bench" / "concurrency_memoweave.py"),
    "mem0": (
        REPO / "bench" / ".venv-mem0" / "bin" / "python",
        REPO / "bench" / "peers" / "mem0_concurrency.py",
    ),
}
MEM0_ENV = REPO / "bench" / "peers" / "mem0_env.sh"


def run_side(system: str, scenario: str, quick: bool, tmp: Path) -> dict[str, Any]:
    python, script = SIDES[system]
    if system == "mem0" and not python.exists():
        subprocess.run(["bash", str(MEM0_ENV)], check=True, stdout=subprocess.DEVNULL)
    out = tmp / f"{system}-{scenario}.json"
    cmd = [str(python), str(script), "--scenario", scenario, "--out", str(out)]
    if quick:
        cmd.append("--quick")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        return {"failed": done.stderr.strip().splitlines()[-3:]}
    return json.loads(out.read_text(encoding="utf-8"))


def rows(results: dict[str, dict[str, Any]], plan: Plan) -> list[tuple[str, str, str, str]]:
    """(measure, target, memoweave, mem0) rows of the table."""

    def cell(system: str, scenario: str, render: Any) -> str:
        data = results.get(system, {}).get(scenario)
        if data is None:
            return "not run"
        if "failed" in data:
            return "failed: " + " / ".join(data["failed"])[:60]
        return str(render(data))

    def both(scenario: str, render: Any) -> tuple[str, str]:
        return cell("memoweave", scenario, render), cell("mem0", scenario, render)

    def ratio(d: dict[str, Any]) -> str:
        idle, loaded = d["idle"]["p95_ms"], d["loaded"]["p95_ms"]
        return f"{loaded / idle:.1f}x" if idle else "n/a"

    def seconds(d: dict[str, Any]) -> str:
        return f"{d['wall_s']:.2f} s"

    def cpu(d: dict[str, Any]) -> str:
        return f"{d['cpu_s']:.2f} s" if "cpu_s" in d else "n/a"

    def present(d: dict[str, Any]) -> str:
        return f"{d['present']}/{plan.burst_adds}"

    def under_load(d: dict[str, Any]) -> str:
        return f"{d['loaded']['p95_ms']:.1f} ms"

    adds, soak = plan.burst_adds, f"soak: {plan.soak_threads} threads, {plan.soak_seconds:.0f} s"
    burst, loaded = "burst", "loaded_search"
    return [
        ("burst: wall, 100 adds / 10 scopes", "<= 1.5 s", *both(burst, seconds)),
        ("burst: CPU seconds of the process", "", *both(burst, cpu)),
        ("burst: memories present", f"{adds}/{adds}", *both(burst, present)),
        ("search p95 idle", "", *both(loaded, lambda d: f"{d['idle']['p95_ms']:.1f} ms")),
        ("search p95, 20 adds in flight", "", *both(loaded, under_load)),
        ("loaded p95 / idle p95", "<= 2x", *both(loaded, ratio)),
        ("searches measured under load", "", *both(loaded, lambda d: d["loaded"]["n"])),
        (f"{soak}: errors", "0", *both("soak", lambda d: d["errors"])),
        ("soak: lost writes", "0", *both("soak", lambda d: f"{d['lost']} of {d['acknowledged']}")),
        ("soak: search p95", "", *both("soak", lambda d: f"{d['searches']['p95_ms']:.1f} ms")),
    ]  # fmt: skip


def print_table(table: list[tuple[str, str, str, str]]) -> None:
    header = ("measure", "target", "memoweave", "mem0 2.2.1")
    widths = [max(len(str(r[i])) for r in [header, *table]) for i in range(4)]
    line = " | ".join
    print(line(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-|-".join("-" * w for w in widths))
    for row in table:
        print(line(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 10 s soak instead of 30 s")
    parser.add_argument("--only", default=",".join(SCENARIOS))
    parser.add_argument("--systems", default="memoweave,mem0")
    args = parser.parse_args()
    plan = Plan.of(args.quick)
    scenarios = [s for s in args.only.split(",") if s]
    systems = [s for s in args.systems.split(",") if s]
    results: dict[str, dict[str, Any]] = {s: {} for s in systems}
    with tempfile.TemporaryDirectory(prefix="concurrency-") as tmp:
        for scenario in scenarios:
            for system in systems:
                print(f"running {scenario} on {system} ...", file=sys.stderr, flush=True)
                results[system][scenario] = run_side(system, scenario, args.quick, Path(tmp))
    table = rows(results, plan)
    print_table(table)
    print(f"\nload average at the end: {load_average()}")
    write_json(RESULTS, {"plan": plan.as_dict(), "results": results, "table": table})


if __name__ == "__main__":
    main()
