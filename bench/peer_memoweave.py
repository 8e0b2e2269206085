"""The memoweave side of ``peer.py``: one system and one layout per process.

    .venv/bin/python bench/peer_memoweave.py --system memoweave --layout 10000 --out r.json
    .venv/bin/python bench/peer_memoweave.py --cache 100000      # embed the corpus once

Phases, all through the public ``Memory`` API in a fresh home (see ``peer.py`` for what
each figure means): open, bulk fill (``add(infer=False)``, 100 messages per call, vectors
of the corpus from the embedding cache so the fill is not a second embedding benchmark),
timed ingest of new texts with the real embedder (one per call, then batched), timed
searches, ``add(infer=True)`` with ``add_cost.py``'s scripted 200 ms LLM, RSS and disk,
then the cold start of ``memoweave search`` in a new process on the home just written.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from add_cost import CountingEmbedder, TimedLLM, timed_add
from peer_data import (
    Layout,
    cache_path,
    cold_start,
    corpus,
    disk_mb,
    load_average,
    load_vectors,
    plan_arguments,
    plan_of,
    pool_size,
    run_phases,
    scope_id,
    write_json,
)

from memoweave.memory.api import Memory
from memoweave.plugins import load_registry
from memoweave.providers.embedder import Embedder, Purpose

MODEL = "onnx-minilm-int8"
FILL_FIGURES = "fill.json"  # beside home/ in a saved fill
# system -> (label, vector_store spec builder taking the home; None: the default stack)
SYSTEMS: dict[str, tuple[str, Any]] = {
    "memoweave": ("memoweave default (Qdrant Edge + ONNX int8 MiniLM)", None),
    "memoweave-sqlite-vec": (
        "memoweave + sqlite-vec",
        lambda home: {"provider": "sqlite-vec", "config": {"path": str(home / "vectors.db")}},
    ),
    "memoweave-milvus-lite": (
        "memoweave + Milvus Lite",
        lambda home: {"provider": "milvus", "config": {"uri": str(home / "milvus.db")}},
    ),
    "memoweave-memory": ("memoweave + in-memory store", lambda home: {"provider": "memory"}),
}


class CachedEmbedder(Embedder):
    """Serves the cached vectors of known texts; embeds the others with ``inner``."""

    def __init__(self, inner: Embedder, known: dict[str, Any]) -> None:
        self.inner = inner
        self.known = known

    @property
    def dims(self) -> int | None:
        return self.inner.dims

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        missing = [t for t in texts if t not in self.known]
        fresh = dict(zip(missing, self.inner.embed(missing, purpose=purpose), strict=True))
        return [fresh[t] if t in fresh else self.known[t].tolist() for t in texts]

    def close(self) -> None:
        self.inner.close()


def build_cache(n: int) -> Path:
    """Embed the first ``n`` facts with the default embedder and save them (once)."""
    path = cache_path(n, MODEL)
    if load_vectors(n, MODEL) is not None:
        return path
    embedder = load_registry().create("embedder", "onnx")
    texts = [f.text for f in corpus(n)]
    out = np.zeros((n, 384), dtype=np.float32)
    for lo in range(0, n, 512):
        out[lo : lo + 512] = np.asarray(embedder.embed(texts[lo : lo + 512]), dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, out)
    return path


def config_for(system: str, home: Path) -> dict[str, Any] | None:
    """The ``Memory`` config of ``system`` under ``home`` (``None``: the default stack,
    found through ``$MEMOWEAVE_HOME``)."""
    make = SYSTEMS[system][1]
    if make is None:
        return None
    return {"vector_store": make(home), "history_db_path": str(home / "history.db")}


class MemoweaveSystem:
    """One ``Memory`` on ``home``, with the cached-vector embedder and the scripted LLM."""

    def __init__(self, system: str, home: Path, known: dict[str, Any]) -> None:
        self.registry = load_registry()
        self.known = known
        self.llm = TimedLLM()
        self.config = config_for(system, home)
        self.memory = self.open()

    def open(self) -> Memory:
        """A new ``Memory`` on the home, with a new embedder (``close`` closes it)."""
        inner = self.registry.create("embedder", "onnx")
        self.embedder = CountingEmbedder(CachedEmbedder(inner, self.known))
        memory = Memory(self.config, llm=self.llm, embedder=self.embedder, registry=self.registry)
        memory.get_all(user_id=scope_id(0), top_k=1)  # opens the collection
        return memory

    def add(self, texts: list[str], user_id: str) -> None:
        self.memory.add(
            [{"role": "user", "content": t} for t in texts], user_id=user_id, infer=False
        )

    def search(self, query: str, user_id: str) -> Any:
        return self.memory.search(query, user_id=user_id, top_k=10)

    def infer_add(self, exchange: Any, user_id: str) -> dict[str, float]:
        return timed_add(self.memory, self.llm, self.embedder, exchange, user_id)

    def close(self) -> None:
        self.memory.close()


def run(system: str, layout: Layout, args: argparse.Namespace) -> dict[str, Any]:
    """Every phase for one system and layout; the figures as a flat dict."""
    facts: list[Any] = []  # the corpus, for a fill (a saved one needs none)
    saved = None
    if args.filled and system != "memoweave-memory":  # the in-memory store has no home
        saved = args.filled / f"{system}-{layout.key}"
    prefilled = None
    home = Path(tempfile.mkdtemp(prefix=f"peer-{system}-", dir=args.tmp))
    if saved is not None and (saved / FILL_FIGURES).exists():
        prefilled = json.loads((saved / FILL_FIGURES).read_text(encoding="utf-8"))
        copy_tree(saved / "home", home)
        known: dict[str, Any] = {}
    else:
        facts = corpus(pool_size(layout))
        vectors = load_vectors(len(facts), MODEL)
        if vectors is None:
            raise SystemExit(f"no embedding cache for {len(facts)} facts: run --cache first")
        known = {f.text: vectors[i] for i, f in enumerate(facts)}
        del vectors  # only the views in known keep the cache mapped, until the fill ends
    os.environ["MEMOWEAVE_HOME"] = str(home)
    started = time.perf_counter()
    opened = MemoweaveSystem(system, home, known)
    result: dict[str, Any] = {
        "system": system,
        "label": SYSTEMS[system][0],
        "layout": layout.key,
        "open_s": time.perf_counter() - started,
    }
    if prefilled is not None:
        result["fill_reused_from"] = str(saved)
    after_fill = None
    if saved is not None and prefilled is None:
        after_fill = functools.partial(save_fill, opened, home, saved)
    figures, _, last_query = run_phases(
        opened, layout, facts, plan_of(args), system, known,
        prefilled=prefilled, after_fill=after_fill,
    )  # fmt: skip
    result.update(figures)
    opened.close()
    result["disk_mb"] = disk_mb(home)
    result.update(cold(system, home, opened.config, last_query, args.cold_runs))
    shutil.rmtree(home, ignore_errors=True)
    result["load_average"] = load_average()
    return result


def copy_tree(source: Path, target: Path) -> None:
    """Copy a home, keeping sparse files sparse (Qdrant Edge preallocates its WAL)."""
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", "--sparse=always", f"{source}/.", str(target)], check=True)
    os.sync()  # written back, as a home is after a clean close (open drops clean pages only)


def save_fill(opened: MemoweaveSystem, home: Path, saved: Path, figures: dict[str, Any]) -> None:
    """Keep a copy of the just-filled ``home`` in ``saved`` (closed while copied, then
    reopened), so a later run skips the fill: ``peer.py --filled DIR``."""
    opened.memory.close()
    staging = saved.with_name(saved.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    copy_tree(home, staging / "home")
    (staging / FILL_FIGURES).write_text(json.dumps(figures), encoding="utf-8")
    shutil.rmtree(saved, ignore_errors=True)
    staging.rename(saved)
    opened.memory = opened.open()


def cold(
    system: str, home: Path, config: dict[str, Any] | None, query: tuple[str, str], runs: int
) -> dict[str, Any]:
    """``memoweave search`` on ``home`` from a new process (the in-memory store has no
    home to reopen)."""
    if system == "memoweave-memory":
        return {}
    cli = str(Path(sys.executable).with_name("memoweave"))
    cmd = [cli, "search", query[1], "--user-id", query[0], "--json"]
    if config is not None:
        path = home / "memoweave.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        cmd += ["--config", str(path)]
    env = {**os.environ, "MEMOWEAVE_HOME": str(home)}
    return cold_start(cmd, env, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    plan_arguments(parser)
    parser.add_argument("--cache", type=int, help="only build the embedding cache of N facts")
    args = parser.parse_args()
    if args.cache:
        print(build_cache(args.cache))
        return
    if args.system not in SYSTEMS:
        parser.error(f"--system must be one of {list(SYSTEMS)}")
    write_json(args.out, run(args.system, args.layout, args))


if __name__ == "__main__":
    main()
