"""Import rate of ``memoweave import`` on the embedded default stack (Qdrant Edge + int8
MiniLM), on LoCoMo's distilled observations (one memory each, with an ADD event):

1. a file without vectors (every text embedded by the target),
2. the same with the vectors exported by the same embedder (reused after a sample check),
3. the second file again (idempotent re-run: nothing written).

mem0 has no import or export to compare with. Prints a table; ``--out`` saves JSON.

    .venv/bin/python bench/import_rate.py [--limit N] [--out bench/results/import_rate.json]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import uuid
from pathlib import Path

from locomo_data import DEFAULT_DATA, load


def observations(data: Path, limit: int) -> list[tuple[str, str]]:
    """``(user_id, fact)`` pairs from every conversation's per-session observations."""
    out = []
    for conv in load(data):
        for key, per_speaker in conv.get("observation", {}).items():
            if not key.endswith("_observation"):
                continue
            for speaker, facts in per_speaker.items():
                out += [(f"{conv['sample_id']}-{speaker}", fact) for fact, _ in facts]
    return out[:limit]


def write_file(path: Path, facts: list[tuple[str, str]], vectors: list[list[float]] | None) -> None:
    now = "2024-05-01T10:00:00+00:00"
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"format": "memoweave-export", "version": 1}) + "\n")
        for i, (user, fact) in enumerate(facts):
            memory_id = str(uuid.UUID(int=i + 1))
            line = {
                "id": memory_id,
                "memory": fact,
                "user_id": user,
                "created_at": now,
                "history": [{"id": f"{memory_id}-add", "event": "ADD", "created_at": now}],
            }
            if vectors is not None:
                line["vector"] = vectors[i]
            out.write(json.dumps(line) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=3000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    from memoweave import Memory
    from memoweave.transfer import import_jsonl

    facts = observations(args.data, args.limit)
    rows = []
    with tempfile.TemporaryDirectory(prefix="mw-import-rate-") as tmp:
        os.environ["MEMOWEAVE_HOME"] = f"{tmp}/vectors-source"
        with Memory() as source:
            vectors = source._providers.embedder.embed([f for _, f in facts])
        plain, with_vectors = Path(tmp, "plain.jsonl"), Path(tmp, "vectors.jsonl")
        write_file(plain, facts, None)
        write_file(with_vectors, facts, vectors)
        for label, file, home in (
            ("no vectors: embed every text", plain, "a"),
            ("vectors of the same embedder", with_vectors, "b"),
            ("the same file again (re-run)", with_vectors, "b"),
        ):
            os.environ["MEMOWEAVE_HOME"] = f"{tmp}/{home}"
            with Memory() as memory:
                start = time.perf_counter()
                report = import_jsonl(memory, file)
                seconds = time.perf_counter() - start
            rows.append(
                {
                    "case": label,
                    "records": report.records,
                    "written": report.written,
                    "embedded": report.embedded,
                    "seconds": round(seconds, 2),
                    "records_per_second": round(report.records / seconds, 1),
                }
            )
    print(f"{'case':32} {'records':>8} {'written':>8} {'embedded':>9} {'s':>7} {'rec/s':>8}")
    for r in rows:
        print(
            f"{r['case']:32} {r['records']:>8} {r['written']:>8} {r['embedded']:>9} "
            f"{r['seconds']:>7} {r['records_per_second']:>8}"
        )
    print(f"load average: {os.getloadavg()[0]:.1f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"rows": rows, "load": os.getloadavg()[0]}, indent=1))


if __name__ == "__main__":
    main()
