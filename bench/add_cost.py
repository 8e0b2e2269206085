"""Cost of one ``Memory.add`` as a chat app calls it (one add per user/assistant exchange).

A scripted LLM sleeps 200 ms per call and answers plausible extractions (the first
statement of each turn, attributed to its speaker; now and then a ``replaces`` of an
existing memory). Over the exchanges of one LoCoMo conversation it measures, per add: LLM
calls, prompt tokens (characters / 4), wall time and the overhead beyond the time spent in
the LLM (p50 / p95), embed calls. ``--peer mem0`` runs the same measurement on mem0 in
its own venv (``bench/.venv-mem0``, see ``add_cost_mem0.py``). ``--graph`` measures
memoweave a second time with an embedded LadybugDB graph store (the same single call also
asks for the facts' relations; the scripted answer then carries plausible ones).

    .venv/bin/python bench/add_cost.py [--data FILE] [--conversation conv-26] [--peer mem0]
    .venv/bin/python bench/add_cost.py --graph

Writes ``bench/results/add_cost.json``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from add_cost_data import (
    DEFAULT_DATA,
    LATENCY_S,
    REPO,
    TOKENS_METHOD,
    Exchange,
    load_exchanges,
    plausible_facts,
    prompt_chars,
    summarize,
)

from memoweave.graph.terms import graph_entities
from memoweave.memory.api import Memory
from memoweave.plugins import load_registry
from memoweave.providers.embedder import Embedder, Purpose
from memoweave.providers.llm import LLMResponse, Message
from memoweave.testing.doubles import ScriptedLLM

_NEW = re.compile(r"^\[(\d+)\] ([^:]+): (.*)$", re.MULTILINE)
_EXISTING = re.compile(r"EXISTING MEMORIES:\n(.*?)\n\n", re.DOTALL)
RESULTS = REPO / "bench" / "results" / "add_cost.json"
MEM0_PYTHON = REPO / "bench" / ".venv-mem0" / "bin" / "python"
MEM0_ENV = REPO / "bench" / "peers" / "mem0_env.sh"


def memoweave_answer(messages: list[Message]) -> dict[str, Any]:
    """The scripted extraction for memoweave's additive prompt."""
    user = str(messages[-1]["content"])
    new_part = user.split("NEW MESSAGES:\n", 1)[-1]
    new = [(m.group(2), m.group(3)) for m in _NEW.finditer(new_part)]
    block = _EXISTING.search(user)
    existing = 0 if block is None or block.group(1) == "(none)" else block.group(1).count("\n") + 1
    wants_relations = '"relations"' in str(messages[0]["content"])
    memories = []
    for text, sources, replaces in plausible_facts(new, existing):
        fact: dict[str, Any] = {"text": text, "sources": sources, "replaces": replaces}
        if wants_relations:
            names = graph_entities(text)
            fact["relations"] = [
                {"source": names[0], "relation": "related_to", "target": other}
                for other in names[1:3]
            ]
        memories.append(fact)
    return {"memories": memories}


class TimedLLM(ScriptedLLM):
    """A ``ScriptedLLM`` that adds up the time spent inside ``generate``."""

    def __init__(self) -> None:
        super().__init__(default=memoweave_answer, latency_s=LATENCY_S)
        self.seconds = 0.0
        self.completion_chars = 0

    def generate(self, messages: list[Message], **kwargs: Any) -> LLMResponse:
        start = time.perf_counter()
        try:
            response = super().generate(messages, **kwargs)
            self.completion_chars += len(response.text or "")
            return response
        finally:
            self.seconds += time.perf_counter() - start


class CountingEmbedder(Embedder):
    """Counts calls and texts of a real embedder."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls = 0
        self.texts = 0

    @property
    def dims(self) -> int | None:
        return self.inner.dims

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts, purpose=purpose)

    def close(self) -> None:
        self.inner.close()


def build_memory(
    home: Path, stack: str, graph: bool = False
) -> tuple[Memory, TimedLLM, CountingEmbedder, str]:
    """The embedded default stack (qdrant edge + onnx) if installed, else say so; with
    ``graph``, plus the embedded LadybugDB graph store."""
    registry = load_registry()
    names = {(i.kind, i.name) for i in registry.list()}
    if stack == "default" and {("vector_store", "qdrant"), ("embedder", "onnx")} <= names:
        store = {"provider": "qdrant", "config": {"mode": "edge", "path": str(home / "qdrant")}}
        label = "qdrant (edge) + onnx all-MiniLM-L6-v2 int8"
    else:
        store = {"provider": "memory"}
        label = "memory store + onnx all-MiniLM-L6-v2 int8"
    embedder = CountingEmbedder(registry.create("embedder", "onnx"))
    llm = TimedLLM()
    config: dict[str, Any] = {"vector_store": store, "history_db_path": str(home / "history.db")}
    if graph:
        config["graph_store"] = {"provider": "ladybug", "config": {"path": str(home / "graph")}}
        label += " + ladybug graph"
    return Memory(config, llm=llm, embedder=embedder, registry=registry), llm, embedder, label


def timed_add(
    memory: Memory, llm: TimedLLM, embedder: CountingEmbedder, ex: Exchange, user_id: str
) -> dict[str, float]:
    """One ``add`` of ``ex`` (infer on): its LLM calls, prompt tokens, embed calls, wall,
    CPU and overhead beyond the LLM (the row :func:`add_cost_data.summarize` reads)."""
    calls0, seconds0, chars0 = len(llm.calls), llm.seconds, llm.completion_chars
    embeds0, texts0 = embedder.calls, embedder.texts
    start, cpu = time.perf_counter(), time.process_time()
    memory.add(ex.messages, user_id=user_id, observed_at=ex.observed_at)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    new_calls = llm.calls[calls0:]
    return {
        "llm_calls": len(new_calls),
        "prompt_tokens": sum(prompt_chars(c.messages) for c in new_calls) / 4,
        "system_tokens": sum(prompt_chars([c.messages[0]]) for c in new_calls) / 4,
        "completion_tokens": (llm.completion_chars - chars0) / 4,
        "embed_calls": embedder.calls - embeds0,
        "embedded_texts": embedder.texts - texts0,
        "wall_ms": wall * 1000,
        "cpu_ms": cpu * 1000,
        "overhead_ms": (wall - (llm.seconds - seconds0)) * 1000,
    }


def run_memoweave(
    exchanges: list[Exchange], *, stack: str, profile: bool, warmup: int, graph: bool = False
) -> dict[str, Any]:
    """Measure every add of ``exchanges`` (after ``warmup`` adds in another scope)."""
    with tempfile.TemporaryDirectory(prefix="memoweave-addcost-") as tmp:
        memory, llm, embedder, label = build_memory(Path(tmp), stack, graph)
        with memory:
            for ex in exchanges[:warmup]:
                memory.add(ex.messages, user_id="warmup", observed_at=ex.observed_at)
            profiler = cProfile.Profile() if profile else None
            rows = []
            for ex in exchanges:
                if profiler:
                    profiler.enable()
                rows.append(timed_add(memory, llm, embedder, ex, "bench"))
                if profiler:
                    profiler.disable()
            memories = len(memory.get_all(user_id="bench", top_k=1000)["results"])
    system = "memoweave + graph" if graph else "memoweave"
    result = {"system": system, "stack": label, "memories": memories, **summarize(rows)}
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
        result["profile"] = out.getvalue()
    return result


def mem0_python() -> Path | None:
    """The mem0 venv's python, creating ``bench/.venv-mem0`` first if needed (pip, once)."""
    python = MEM0_PYTHON
    if not python.exists() and MEM0_ENV.exists():
        made = subprocess.run(["bash", str(MEM0_ENV)], capture_output=True, text=True)
        python = Path(made.stdout.strip() or MEM0_PYTHON)
    return python if python.exists() else None


def run_mem0(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``add_cost_mem0.py`` in the mem0 venv; its JSON summary, or the failure."""
    python = mem0_python()
    if python is None:
        return {"system": "mem0", "error": f"{MEM0_PYTHON} missing; see bench/README.md"}
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [
            str(python),
            str(REPO / "bench" / "add_cost_mem0.py"),
            "--data",
            str(args.data),
            "--out",
            out.name,
            "--limit",
            str(args.limit or 0),
            "--warmup",
            str(args.warmup),
        ] + (["--conversation", args.conversation] if args.conversation else [])
        env = {**os.environ, "MEM0_TELEMETRY": "False", "HF_HUB_OFFLINE": "1"}
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            return {"system": "mem0", "error": proc.stderr.strip().splitlines()[-5:]}
        return json.loads(Path(out.name).read_text())


def print_table(results: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Cost of one add (scripted LLM, 200 ms per call)", title_justify="left")
    table.add_column("metric")
    for r in results:
        table.add_column(r["system"], justify="right")
    rows = [
        ("adds measured", "adds", "{:.0f}"),
        ("LLM calls / add", "llm_calls_per_add", "{:.2f}"),
        ("prompt tokens / add", "prompt_tokens_per_add", "{:,.0f}"),
        ("  of which system prompt", "system_prompt_tokens", "{:,.0f}"),
        ("completion tokens / add", "completion_tokens_per_add", "{:,.0f}"),
        ("embed calls / add", "embed_calls_per_add", "{:.2f}"),
        ("texts embedded / add", "embedded_texts_per_add", "{:.2f}"),
        ("wall ms p50", "wall_ms_p50", "{:.1f}"),
        ("wall ms p95", "wall_ms_p95", "{:.1f}"),
        ("overhead ms p50", "overhead_ms_p50", "{:.1f}"),
        ("overhead ms p95", "overhead_ms_p95", "{:.1f}"),
        ("CPU ms p50 (all threads)", "cpu_ms_p50", "{:.1f}"),
        ("CPU ms p95 (all threads)", "cpu_ms_p95", "{:.1f}"),
    ]
    for label, key, fmt in rows:
        table.add_row(
            label, *(fmt.format(r[key]) if key in r else str(r.get("error", "-")) for r in results)
        )
    Console().print(table)
    for r in results:
        print(f"{r['system']}: {r.get('stack', r.get('error'))}")
    print(f"tokens: {TOKENS_METHOD}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversation", help="sample_id (default: the first one)")
    parser.add_argument("--limit", type=int, default=0, help="measure only the first N adds")
    parser.add_argument("--warmup", type=int, default=3, help="adds before measuring")
    parser.add_argument("--stack", choices=["default", "memory"], default="default")
    parser.add_argument("--peer", choices=["mem0"], action="append", default=[])
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the adds")
    parser.add_argument("--graph", action="store_true", help="also measure with a graph store")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sample_id, exchanges = load_exchanges(args.data, args.conversation)
    if args.limit:
        exchanges = exchanges[: args.limit]
    results = [run_memoweave(exchanges, stack=args.stack, profile=args.profile, warmup=args.warmup)]
    if args.graph:
        graph_run = run_memoweave(
            exchanges, stack=args.stack, profile=False, warmup=args.warmup, graph=True
        )
        results.append(graph_run)
    if "mem0" in args.peer:
        results.append(run_mem0(args))
    profile = results[0].pop("profile", None)
    print_table(results)
    if profile:
        print(profile)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "conversation": sample_id,
        "exchanges": len(exchanges),
        "llm_latency_s": LATENCY_S,
        "tokens": TOKENS_METHOD,
        "results": results,
    }
    RESULTS.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
