"""The memoweave side of ``concurrency.py``: one scenario per process, on the embedded
default stack (Qdrant Edge + int8 ONNX all-MiniLM-L6-v2 + SQLite) with a scripted LLM
whose latency is awaited (``ScriptedLLM.agenerate``, like an async SDK) under
``AsyncMemory`` and slept (``generate``) under ``Memory``.

    .venv/bin/python bench/concurrency_memoweave.py --scenario burst --out r.json
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from concurrency_data import (
    Plan,
    facts_of,
    latency_summary,
    load_average,
    reader_text,
    statement,
    write_json,
)

from memoweave import AsyncMemory, Memory
from memoweave.providers.llm import Message
from memoweave.testing.doubles import ScriptedLLM

_NEW = re.compile(r"^\[(\d+)\] ([^:]+): (.*)$", re.MULTILINE)
LABEL = "memoweave (Qdrant Edge + ONNX MiniLM int8 + SQLite)"


def answer(messages: list[Message]) -> dict[str, Any]:
    """The scripted extraction for memoweave's additive prompt: one fact per message."""
    new_part = str(messages[-1]["content"]).split("NEW MESSAGES:\n", 1)[-1]
    new = [(m.group(2), m.group(3)) for m in _NEW.finditer(new_part)]
    return {"memories": [{"text": t, "sources": s} for t, s in facts_of(new)]}


def config(home: Path) -> dict[str, Any]:
    return {
        "vector_store": {"provider": "qdrant", "config": {"mode": "edge", "path": str(home)}},
        "embedder": {"provider": "onnx"},
        "history_db_path": str(home / "history.db"),
    }


def added(results: list[dict[str, Any]]) -> list[str]:
    return [e["id"] for r in results for e in r["results"] if e["event"] == "ADD"]


async def burst(plan: Plan, home: Path) -> dict[str, Any]:
    """N concurrent adds to S scopes, LLM answering after ``burst_latency_s``."""
    llm = ScriptedLLM(default=answer, latency_s=plan.burst_latency_s)
    async with AsyncMemory(config(home), llm=llm) as memory:
        await memory.add(statement(0, "warm-up"), user_id="warm-up")
        await memory.search("parcel", user_id="warm-up")
        scopes = [f"user-{s}" for s in range(plan.burst_scopes)]
        calls = [
            memory.add(statement(i, scopes[i % len(scopes)]), user_id=scopes[i % len(scopes)])
            for i in range(plan.burst_adds)
        ]
        started, cpu = time.perf_counter(), time.process_time()
        results = await asyncio.gather(*calls)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        present = 0
        for scope in scopes:
            page = await memory.get_all(user_id=scope, top_k=1000, include_superseded=True)
            present += len(page["results"])
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "acknowledged": len(added(results)),
        "present": present,
    }


async def loaded_search(plan: Plan, home: Path) -> dict[str, Any]:
    """Search latency idle, then while ``loaded_adds`` adds wait for a slow LLM."""
    llm = ScriptedLLM(default=answer, latency_s=plan.loaded_latency_s)
    async with AsyncMemory(config(home), llm=llm) as memory:
        texts = [reader_text(i) for i in range(plan.reader_memories)]
        await memory.add(
            [{"role": "user", "content": t} for t in texts], user_id="reader", infer=False
        )
        queries = ["what about hiking", "ramen evenings", "violin practice", "trip to Lisbon"]
        for q in queries:
            await memory.search(q, user_id="reader")
        idle = []
        for i in range(plan.idle_searches):
            started = time.perf_counter()
            await memory.search(queries[i % len(queries)], user_id="reader")
            idle.append(time.perf_counter() - started)
        adds = [
            asyncio.ensure_future(memory.add(statement(i, f"writer-{i}"), user_id=f"writer-{i}"))
            for i in range(plan.loaded_adds)
        ]
        await asyncio.sleep(0.05)
        loaded, window_end = [], time.perf_counter() + plan.loaded_latency_s * 0.8
        while time.perf_counter() < window_end and not all(a.done() for a in adds):
            started = time.perf_counter()
            await memory.search(queries[len(loaded) % len(queries)], user_id="reader")
            loaded.append(time.perf_counter() - started)
        in_flight = sum(not a.done() for a in adds)
        results = await asyncio.gather(*adds)
    return {
        "idle": latency_summary(idle),
        "loaded": latency_summary(loaded),
        "adds_in_flight_at_end": in_flight,
        "acknowledged": len(added(results)),
    }


def soak(plan: Plan, home: Path) -> dict[str, Any]:
    """``soak_threads`` threads on ONE ``Memory``: adds and searches for ``soak_seconds``."""
    llm = ScriptedLLM(default=answer, latency_s=plan.soak_latency_s)
    errors: list[str] = []
    acknowledged: list[str] = []
    searches: list[float] = []
    lock = threading.Lock()
    with Memory(config(home), llm=llm) as memory:
        memory.add(statement(0, "warm-up"), user_id="warm-up")
        stop = time.perf_counter() + plan.soak_seconds

        def worker(t: int) -> None:
            i = 0
            while time.perf_counter() < stop:
                scope = f"soak-{(t + i) % plan.soak_scopes}"
                try:
                    if i % 2 == 0:
                        ids = added(
                            [memory.add(statement(t * 1_000_000 + i, scope), user_id=scope)]
                        )
                        with lock:
                            acknowledged.extend(ids)
                    else:
                        started = time.perf_counter()
                        memory.search("parcel weighs grams", user_id=scope)
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
        lost = [i for i in acknowledged if memory.get(i) is None]
        no_history = [i for i in acknowledged if not memory.history(i)]
    return {
        "errors": len(errors),
        "error_samples": errors[:5],
        "acknowledged": len(acknowledged),
        "lost": len(lost),
        "without_history": len(no_history),
        "searches": latency_summary(searches),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=["burst", "loaded_search", "soak"], required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    plan = Plan.of(args.quick)
    with tempfile.TemporaryDirectory(prefix="concurrency-memoweave-") as tmp:
        home = Path(tmp)
        if args.scenario == "soak":
            result = soak(plan, home)
        else:
            result = asyncio.run(globals()[args.scenario](plan, home))
    write_json(args.out, {"system": LABEL, **result, "load_average": load_average()})


if __name__ == "__main__":
    main()
