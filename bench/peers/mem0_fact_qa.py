"""The mem0 side of ``fact_qa.py --peer mem0`` (runs in bench/.venv-mem0).

mem0 2.2.1 offline (``mem0_locomo.offline_memory``): each persona's facts are one ``add``
each with ``infer=False``, scoped to the persona's user; each question is searched with
``top_k=10`` and ``threshold=0`` (mem0's score is its vector similarity). Writes the
per-question rows ``fact_qa.py`` summarises.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPENAI_API_KEY", "sk-offline-dummy")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mem0_locomo import offline_memory


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    personas = json.loads(args.data.read_text(encoding="utf-8"))["personas"]
    memory = offline_memory(tempfile.mkdtemp(prefix="mem0-fact-qa-"))
    start = time.perf_counter()
    count = 0
    for persona in personas:
        for key, text in persona["facts"].items():
            memory.add(
                [{"role": "user", "content": text}],
                user_id=persona["id"],
                metadata={"fact": key},
                infer=False,
            )
            count += 1
    ingest_ms = (time.perf_counter() - start) * 1000 / count
    rows, latencies = [], []
    for persona in personas:
        for q in persona["questions"]:
            t0 = time.perf_counter()
            found = memory.search(
                q["q"], filters={"user_id": persona["id"]}, top_k=10, threshold=0.0
            )
            latencies.append((time.perf_counter() - t0) * 1000)
            results = found["results"] if isinstance(found, dict) else found
            rows.append(
                {
                    "persona": persona["id"],
                    "split": persona["split"],
                    "answers": q["a"],
                    "q": q["q"],
                    "ranked": [(h.get("metadata") or {}).get("fact", "") for h in results],
                    "top_score": float(results[0]["score"]) if results else 0.0,
                }
            )
    for row in rows:
        row["latency_p50_ms"] = statistics.median(latencies)
    args.out.write_text(json.dumps({"system": "mem0", "ingest_ms": ingest_ms, "rows": rows}))


if __name__ == "__main__":
    main()
