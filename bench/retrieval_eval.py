"""Helpers shared by the retrieval benchmarks (``locomo_recall.py``, ``fact_qa.py``).

- :func:`explained_pool`: one ``search(explain=True)`` over a wide pool, from which the
  dense-only ranking (plain cosine with the same embedder, the same store) is read and the
  signals of every candidate are captured for offline fitting;
- :func:`auc`: the probability that a random positive outscores a random negative;
- :func:`append_capture`: one JSON line per search with each candidate's signal values;
- :func:`memory_config`: the config a run builds ``Memory`` from (``--rerank`` adds the
  ``onnx`` cross-encoder reranker unless the config names one);
- :func:`reranker_name` / :func:`reranker_of`: which reranker that config names, and (built
  to ask it) whether its scores are similarities (late interaction) or probabilities.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

RERANK_SYSTEM = "mw+rerank"
"""The name of memoweave with ``search(rerank=True)`` in the tables."""
POOL = 200
"""Results asked for in the explain pass: the dense top 200 are all in it, so the dense-only
top 20 is exact."""


def explained_pool(memory: Any, query: str, **scope: Any) -> list[dict[str, Any]]:
    """Every candidate of a wide search, with ``explain``."""
    return memory.search(query, top_k=POOL, explain=True, **scope)["results"]


def dense_order(pool: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pool ranked by cosine similarity alone (dense-only)."""
    scored = [h for h in pool if "dense" in h["explain"]]
    return sorted(scored, key=lambda h: (-h["explain"]["dense"]["score"], h["id"]))


def auc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """Mann-Whitney AUC (ties count one half); NaN when a side is empty."""
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def append_capture(
    out: IO[str] | None,
    group: str,
    query: str,
    pool: Sequence[dict[str, Any]],
    labels: dict,
    reranked: Sequence[dict[str, Any]] = (),
) -> None:
    """Write one line: the query, its group and each candidate's fused score, signal values
    and label; with ``reranked`` (the results of the same search with ``rerank=True`` and
    ``explain``), the reranker's raw score of the candidates it saw (``rerank_raw``)."""
    if out is None:
        return
    explained = [h for h in reranked if "rerank" in h["explain"]]
    rerank = {h["id"]: h["explain"]["rerank"]["score"] for h in explained}
    rows = []
    for h in pool:
        row = {"label": labels.get(h["id"], 0), "fused": h["score"]}
        for name, sig in h["explain"].items():
            row[name] = sig.get("value", sig["score"])
            row[f"{name}_raw"] = sig["score"]
        if h["id"] in rerank:
            row["rerank_raw"] = rerank[h["id"]]
        rows.append(row)
    out.write(json.dumps({"group": group, "query": query, "candidates": rows}) + "\n")


def open_capture(path: Path | None) -> IO[str] | None:
    """The capture file (truncated), or ``None``."""
    if path is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("w", encoding="utf-8")


def reranker_name(config: Any) -> str:
    """The reranker provider a ``memory_config`` result names (``none`` without one)."""
    spec = config.get("reranker") if isinstance(config, dict) else None
    return str(spec["provider"]) if spec else "none"


def reranker_of(config: Any) -> tuple[str, bool]:
    """:func:`reranker_name`, and whether the reranker's scores are similarities (a
    late-interaction model, fused into the first pass) rather than a cross-encoder's
    probabilities; built once through the registry to ask it."""
    from memoweave.plugins import load_registry

    spec = config.get("reranker") if isinstance(config, dict) else None
    if not spec:
        return "none", False
    reranker = load_registry().create("reranker", spec["provider"], spec.get("config") or {})
    try:
        return spec["provider"], reranker.scores_are_similarities
    finally:
        reranker.close()


def memory_config(path: str | None, rerank: bool) -> Any:
    """``path`` (a YAML file) or the embedded default stack, with the ``onnx`` reranker
    added when ``rerank`` is set and the config names none."""
    if not rerank:
        return path
    import yaml

    config = yaml.safe_load(Path(path).read_text(encoding="utf-8")) if path else {}
    config.setdefault("reranker", {"provider": "onnx"})
    return config
