"""The mem0 side of ``concurrency.py`` (runs in ``bench/.venv-mem0``): one scenario per
process, on mem0 2.2.1's default local stack (Qdrant local on disk + sentence-transformers
all-MiniLM-L6-v2, ``add_cost_mem0.mem0_config``) with a scripted LLM that sleeps its
latency and answers the same one fact per message as memoweave's. ``AsyncMemory`` for
the async scenarios (mem0 runs every blocking call, the LLM included, through
``asyncio.to_thread``), ``Memory`` shared by threads for the soak. No network.

    bench/.venv-mem0/bin/python bench/peers/mem0_concurrency.py --scenario burst --out r.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from add_cost_mem0 import _SECTION, mem0_config
from concurrency_data import (
    Plan,
    facts_of,
    latency_summary,
    load_average,
    reader_text,
    statement,
    write_json,
)

LABEL = "mem0 2.2.1 (Qdrant local + sentence-transformers MiniLM + SQLite)"


class SleepingLLM:
    """mem0's LLM slot: sleeps ``latency_s`` (in the calling thread, as a blocking SDK
    does), then answers one fact per new message in mem0's format."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.calls = 0
        self._lock = threading.Lock()

    def generate_response(self, messages: list[dict[str, Any]], **_: Any) -> str:
        with self._lock:
            self.calls += 1
        time.sleep(self.latency_s)
        sections = dict(_SECTION.findall(str(messages[-1]["content"])))
        new = [
            (line.split(": ", 1)[0], line.split(": ", 1)[1])
            for line in sections.get("New Messages", "").splitlines()
            if ": " in line
        ]
        facts = [
            {"id": str(i), "text": text, "attributed_to": new[sources[0] - 1][0]}
            for i, (text, sources) in enumerate(facts_of(new))
        ]
        return json.dumps({"memory": facts})


def memories(page: Any) -> list[dict[str, Any]]:
    return page["results"] if isinstance(page, dict) else list(page)


def added(results: list[Any]) -> int:
    return sum(1 for r in results for e in memories(r) if e.get("event") == "ADD")


def open_async(home: Path, latency_s: float) -> Any:
    from mem0 import AsyncMemory

    memory = AsyncMemory.from_config(mem0_config(str(home)))
    memory.llm = SleepingLLM(latency_s)
    return memory


async def burst(plan: Plan, home: Path) -> dict[str, Any]:
    memory = open_async(home, plan.burst_latency_s)
    await memory.add(statement(0, "warm-up"), user_id="warm-up")
    await memory.search("parcel", filters={"user_id": "warm-up"}, threshold=0.0)
    scopes = [f"user-{s}" for s in range(plan.burst_scopes)]
    calls = [
        memory.add(statement(i, scopes[i % len(scopes)]), user_id=scopes[i % len(scopes)])
        for i in range(plan.burst_adds)
    ]
    started, cpu = time.perf_counter(), time.process_time()
    results = await asyncio.gather(*calls, return_exceptions=True)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    errors = [repr(r)[:300] for r in results if isinstance(r, BaseException)]
    present = 0
    for scope in scopes:
        present += len(memories(await memory.get_all(filters={"user_id": scope}, top_k=1000)))
    ok = [r for r in results if not isinstance(r, BaseException)]
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "acknowledged": added(ok),
        "present": present,
        "errors": len(errors),
        "error_samples": errors[:3],
    }


async def loaded_search(plan: Plan, home: Path) -> dict[str, Any]:
    memory = open_async(home, plan.loaded_latency_s)
    texts = [reader_text(i) for i in range(plan.reader_memories)]
    await memory.add([{"role": "user", "content": t} for t in texts], user_id="reader", infer=False)
    queries = ["what about hiking", "ramen evenings", "violin practice", "trip to Lisbon"]

    async def search(q: str) -> None:
        await memory.search(q, filters={"user_id": "reader"}, threshold=0.0)

    for q in queries:
        await search(q)
    idle = []
    for i in range(plan.idle_searches):
        started = time.perf_counter()
        await search(queries[i % len(queries)])
        idle.append(time.perf_counter() - started)
    adds = [
        asyncio.ensure_future(memory.add(statement(i, f"writer-{i}"), user_id=f"writer-{i}"))
        for i in range(plan.loaded_adds)
    ]
    await asyncio.sleep(0.05)
    loaded, window_end = [], time.perf_counter() + plan.loaded_latency_s * 0.8
    while time.perf_counter() < window_end and not all(a.done() for a in adds):
        started = time.perf_counter()
        await search(queries[len(loaded) % len(queries)])
        loaded.append(time.perf_counter() - started)
    in_flight = sum(not a.done() for a in adds)
    results = await asyncio.gather(*adds, return_exceptions=True)
    ok = [r for r in results if not isinstance(r, BaseException)]
    return {
        "idle": latency_summary(idle),
        "loaded": latency_summary(loaded),
        "adds_in_flight_at_end": in_flight,
        "acknowledged": added(ok),
        "errors": len(results) - len(ok),
    }


def soak(plan: Plan, home: Path) -> dict[str, Any]:
    from mem0 import Memory

    memory = Memory.from_config(mem0_config(str(home)))
    memory.llm = SleepingLLM(plan.soak_latency_s)
    memory.add(statement(0, "warm-up"), user_id="warm-up")
    errors: list[str] = []
    acknowledged: list[str] = []
    searches: list[float] = []
    lock = threading.Lock()
    stop = time.perf_counter() + plan.soak_seconds

    def worker(t: int) -> None:
        i = 0
        while time.perf_counter() < stop:
            scope = f"soak-{(t + i) % plan.soak_scopes}"
            try:
                if i % 2 == 0:
                    out = memory.add(statement(t * 1_000_000 + i, scope), user_id=scope)
                    ids = [e["id"] for e in memories(out) if e.get("event") == "ADD"]
                    with lock:
                        acknowledged.extend(ids)
                else:
                    started = time.perf_counter()
                    memory.search("parcel weighs grams", filters={"user_id": scope}, threshold=0.0)
                    with lock:
                        searches.append(time.perf_counter() - started)
            except Exception as exc:  # counted, the soak goes on
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}"[:300])
            i += 1

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(plan.soak_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lost = 0
    for memory_id in acknowledged:
        try:
            if memory.get(memory_id) is None:
                lost += 1
        except Exception:
            lost += 1
    return {
        "errors": len(errors),
        "error_samples": errors[:5],
        "acknowledged": len(acknowledged),
        "lost": lost,
        "searches": latency_summary(searches),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=["burst", "loaded_search", "soak"], required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    plan = Plan.of(args.quick)
    with tempfile.TemporaryDirectory(prefix="concurrency-mem0-") as tmp:
        home = Path(tmp)
        if args.scenario == "soak":
            result = soak(plan, home)
        else:
            result = asyncio.run(globals()[args.scenario](plan, home))
    write_json(args.out, {"system": LABEL, **result, "load_average": load_average()})


if __name__ == "__main__":
    main()
