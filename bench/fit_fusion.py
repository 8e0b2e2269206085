"""Fit and check the weights of ``calibrated`` fusion on captured signals.

Reads the JSON lines written by ``--capture`` (``locomo_recall.py``, ``fact_qa.py``): per
search, every candidate's signal values and whether it is relevant. Fits a logistic
regression ``P(relevant) = sigmoid(bias + w . values)`` on the groups named by ``--fit``
and reports ranking and calibration on every group, so weights chosen on one half are
checked on the other:

    .venv/bin/python bench/fit_fusion.py results/cap_turns.jsonl --fit conv-26,conv-30,conv-41
    .venv/bin/python bench/fit_fusion.py results/cap_fact_qa.jsonl --fit dev

``--weights bias,dense,keyword,entity,time`` evaluates given weights instead of fitting.
``--rerank-stage`` fits the second stage of a reranked search instead (captures of a
``--rerank`` run hold each reranked candidate's fused score and reranker score):

    .venv/bin/python bench/fit_fusion.py results/cap_facts_rr.jsonl results/cap_fqa_rr.jsonl \
        --fit conv-26,conv-30,conv-41,dev --rerank-stage
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from retrieval_eval import auc

SIGNALS = ("dense", "keyword", "entity", "time")


def load(paths: list[Path], keyword_half: float | None = None) -> list[dict]:
    """Every captured search: ``group``, ``x`` (candidates x signals), ``y`` (labels).
    ``keyword_half``: use ``bm25 / (bm25 + keyword_half)`` instead of the captured value."""
    searches = []

    def value(c: dict, name: str) -> float:
        if name == "keyword" and keyword_half is not None:
            raw = c.get("keyword_raw", 0.0)
            return raw / (raw + keyword_half)
        return c.get(name, 0.0)

    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            s = json.loads(line)
            x = np.array([[value(c, n) for n in SIGNALS] for c in s["candidates"]], float)
            y = np.array([c["label"] for c in s["candidates"]], float)
            searches.append({"group": s["group"], "x": x.reshape(-1, len(SIGNALS)), "y": y})
    return searches


def fit(searches: list[dict], l2: float = 1e-3) -> np.ndarray:
    """Logistic regression with non-negative signal weights (a signal that would get a
    negative weight is dropped and the rest refitted); returns (bias, weights...)."""
    x = np.vstack([s["x"] for s in searches])
    y = np.concatenate([s["y"] for s in searches])
    keep = list(range(x.shape[1]))
    while True:
        w = _newton(np.hstack([np.ones((len(x), 1)), x[:, keep]]), y, l2)
        negative = [k for k, v in zip(keep, w[1:], strict=True) if v < 0]
        if not negative:
            out = np.zeros(x.shape[1] + 1)
            out[0] = w[0]
            out[[k + 1 for k in keep]] = w[1:]
            return out
        keep.remove(min(negative, key=lambda k: w[1 + keep.index(k)]))


def _newton(a: np.ndarray, y: np.ndarray, l2: float) -> np.ndarray:
    w = np.zeros(a.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(a @ w)))
        grad = a.T @ (p - y) + l2 * np.r_[0, w[1:]]
        hess = (a * (p * (1 - p))[:, None]).T @ a + l2 * np.diag(np.r_[0, np.ones(len(w) - 1)])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def search_weights(searches: list[dict], objective: str) -> np.ndarray:
    """Ranking weights relative to dense = 1, chosen on a grid to maximise ``objective``
    (``recall@10`` or ``top1``) over ``searches``; then bias and scale fitted by logistic
    regression on the fused value (Platt scaling), which keeps the ranking."""
    best, best_w = -1.0, None
    for k in (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0):
        for e in (0.0, 0.05, 0.1, 0.2, 0.4):
            for t in (0.0, 0.05, 0.1, 0.2, 0.4):
                w = np.array([0.0, 1.0, k, e, t])
                value = evaluate(searches, w)[objective]
                if value > best + 1e-9:
                    best, best_w = value, w
    assert best_w is not None
    z = [{"x": (s["x"] @ best_w[1:])[:, None], "y": s["y"]} for s in searches]
    scale = _newton(np.hstack([np.ones((sum(len(s["y"]) for s in z), 1)),
                               np.vstack([s["x"] for s in z])]),
                    np.concatenate([s["y"] for s in z]), 1e-6)  # fmt: skip
    return np.r_[scale[0], best_w[1:] * scale[1]]


def calibrate(searches: list[dict], w: np.ndarray, top: int = 3) -> np.ndarray:
    """Rescale and shift the fused value ``w . x`` (same ranking) so that the score of a
    result among the first ``top`` of its search estimates the chance that it is
    relevant: a logistic fit of the labels of those results on their fused values."""
    z, y = [], []
    for s in searches:
        fused = s["x"] @ w[1:]
        order = np.argsort(-fused, kind="stable")[:top]
        z.append(fused[order])
        y.append(s["y"][order])
    zs = np.concatenate(z)[:, None]
    a, b = _newton(np.hstack([np.ones((len(zs), 1)), zs]), np.concatenate(y), 1e-6)
    return np.r_[a, w[1:] * b]


def evaluate(searches: list[dict], w: np.ndarray) -> dict[str, float]:
    """Ranking (pool recall@10, top-1 of answerable) and calibration (AUC of top scores,
    answerable vs not; mean predicted vs observed relevance of the top result). A search
    with ``relevant`` counts recall against that many relevant candidates (reranked
    searches: some are not among the reranked ones)."""
    recall, top1, pos_top, neg_top, pred, seen = [], [], [], [], [], []
    for s in searches:
        z = w[0] + s["x"] @ w[1:]
        score = 1 / (1 + np.exp(-z))
        order = np.argsort(-score, kind="stable")
        y = s["y"][order]
        best = float(score[order[0]]) if len(order) else 0.0
        relevant = s.get("relevant", s["y"].sum())
        if relevant > 0:
            recall.append(y[:10].sum() / relevant)
            top1.append(float(y[0]) if len(y) else 0.0)
            pos_top.append(best)
        else:
            neg_top.append(best)
        if len(order):
            pred.append(best)
            seen.append(float(y[0]))
    return {
        "n": len(searches),
        "recall@10": float(np.mean(recall)) if recall else float("nan"),
        "top1": float(np.mean(top1)) if top1 else float("nan"),
        "auc": auc(pos_top, neg_top),
        "top_pred": float(np.mean(pred)),
        "top_seen": float(np.mean(seen)),
    }


def load_reranked(paths: list[Path]) -> list[dict]:
    """Every captured reranked search: ``x`` = (first-pass logit, reranker value) of each
    candidate the reranker scored, ``y`` its labels, ``relevant`` all relevant candidates."""
    from memoweave.retrieval.candidates import Signal
    from memoweave.retrieval.fusion import signal_value

    def logit(p: float) -> float:
        p = min(1 - 1e-12, max(1e-12, p))
        return float(np.log(p / (1 - p)))

    searches = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            s = json.loads(line)
            seen = [c for c in s["candidates"] if "rerank_raw" in c]
            x = [[logit(c["fused"]), signal_value("rerank", Signal(c["rerank_raw"]), None)]
                 for c in seen]  # fmt: skip
            searches.append({
                "group": s["group"],
                "x": np.array(x, float).reshape(-1, 2),
                "y": np.array([c["label"] for c in seen], float),
                "relevant": sum(c["label"] for c in s["candidates"]),
            })  # fmt: skip
    return searches


def fit_rerank_stage(searches: list[dict], top: int = 3) -> np.ndarray:
    """(bias, fused, rerank) of :class:`memoweave.retrieval.profiles.RerankStage`: the
    reranker's weight relative to the first-pass logit chosen on a grid (highest mean of
    recall@10 and top-1), then bias and scale fitted on each search's first ``top``. The
    stage's ``about_user`` offset is not in a capture: it was chosen apart (by fact-QA
    AUC, docs/retrieval.md), and a refit here leaves it as it is."""
    best, best_c = -1.0, 0.0
    for c in (0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0):
        m = evaluate(searches, np.array([0.0, 1.0, c]))
        value = m["recall@10"] + m["top1"]
        if value > best + 1e-9:
            best, best_c = value, c
    z, y = [], []
    for s in searches:
        fused = s["x"] @ np.array([1.0, best_c])
        order = np.argsort(-fused, kind="stable")[:top]
        z.append(fused[order])
        y.append(s["y"][order])
    zs = np.concatenate(z)[:, None]
    a, b = _newton(np.hstack([np.ones((len(zs), 1)), zs]), np.concatenate(y), 1e-6)
    return np.array([a, b, b * best_c])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("captures", nargs="+", type=Path)
    parser.add_argument("--fit", help="comma-separated groups to fit on (default: all)")
    parser.add_argument("--weights", help="bias,dense,keyword,entity,time to evaluate")
    parser.add_argument("--dense-only", action="store_true", help="evaluate cosine alone")
    parser.add_argument(
        "--rank", choices=["recall@10", "top1"], help="grid-search ranking weights, then calibrate"
    )
    parser.add_argument("--keyword-half", type=float, help="saturate raw BM25 at this half point")
    parser.add_argument(
        "--rerank-stage", action="store_true", help="fit the reranked stage (bias,fused,rerank)"
    )
    args = parser.parse_args()
    if args.rerank_stage:
        report_rerank_stage(load_reranked(args.captures), args.fit)
        return
    searches = load(args.captures, args.keyword_half)
    groups = sorted({s["group"] for s in searches})
    if args.dense_only:
        w = np.array([0.0, 1.0, 0.0, 0.0, 0.0])
    elif args.weights:
        w = np.array([float(v) for v in args.weights.split(",")])
    else:
        chosen = set(args.fit.split(",")) if args.fit else set(groups)
        subset = [s for s in searches if s["group"] in chosen]
        w = search_weights(subset, args.rank) if args.rank else fit(subset)
        w = calibrate(subset, w)
    print("weights", dict(zip(("bias", *SIGNALS), np.round(w, 3).tolist(), strict=True)))
    for group in [*groups, "all"]:
        subset = [s for s in searches if group in ("all", s["group"])]
        m = evaluate(subset, w)
        print(f"{group:<10}" + "  ".join(f"{k} {v:.3f}" for k, v in m.items()))


def report_rerank_stage(searches: list[dict], fit_groups: str | None) -> None:
    """Fit the reranked stage on ``fit_groups`` and print it and every group's figures."""
    groups = sorted({s["group"] for s in searches})
    chosen = set(fit_groups.split(",")) if fit_groups else set(groups)
    w = fit_rerank_stage([s for s in searches if s["group"] in chosen])
    print(
        "rerank stage", dict(zip(("bias", "fused", "rerank"), np.round(w, 3).tolist(), strict=True))
    )
    for group in [*groups, "all"]:
        m = evaluate([s for s in searches if group in ("all", s["group"])], w)
        print(f"{group:<10}" + "  ".join(f"{k} {v:.3f}" for k, v in m.items()))


if __name__ == "__main__":
    main()
