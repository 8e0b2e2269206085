"""Late interaction: a reranker of similarities joins the first pass of the fused top.

A reranker whose scores are similarities in [0, 1]
(:attr:`~memoweave.providers.reranker.Reranker.scores_are_similarities`: the ``onnx-colbert``
late-interaction model's rescaled MaxSim) is not a second opinion to mix with a finished
score, as a cross-encoder's probability is (:func:`.fusion.fuse_reranked`): it is one more
view of meaning beside the dense cosine. So the fused top ``late_interaction_top_n``
(with ``search(rerank=True)``, or at every search for the ``late_interaction`` section's
model) are fused again from their first-pass signals with
the kind's :class:`.profiles.SimilarityStage` (its own bias and weights, plus the
similarity's signal: ``rerank`` or ``late``), and the neighbour pass runs again among them,
so a fact's session-mates and a turn's nearby turns see its new score. A kind without a
stage keeps its first-pass score, the similarity recorded. The scores stay calibrated
probabilities, so ``threshold`` applies to them; the results past the top follow in fused
order, as after a cross-encoder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from memoweave.providers.reranker import Reranker
from memoweave.retrieval.candidates import Candidate, Signal, record
from memoweave.retrieval.fusion import fuse_calibrated
from memoweave.retrieval.neighbours import neighbour_scores
from memoweave.retrieval.profiles import Profile, SimilarityStage, profile_of
from memoweave.runtime.steps import Steps, call

WeightsOf = Callable[[Profile], Mapping[str, float]]
"""The retriever's weights of a profile (the settings' overrides applied)."""


def similarity_stage(
    reranker: Reranker,
    query: str,
    head: Sequence[Candidate],
    weights_of: WeightsOf,
    signal: str = "rerank",
) -> Steps[list[Candidate]]:
    """The pipeline re-scoring ``head`` (the fused top, best first) with the reranker's
    similarities, recorded as ``signal`` (``rerank`` for ``search(rerank=True)``, ``late``
    for the ``late_interaction`` section's model): ``head`` again, best first."""
    texts = [c.payload.get("memory", "") for c in head]
    out = yield call(reranker.rerank, query, texts, top_k=len(texts))
    for rank, doc in enumerate(out, start=1):
        score = float(doc.score)
        value = min(1.0, max(0.0, score))
        head[doc.index].signals[signal] = Signal(score, value=value, rank=rank)
    staged: dict[str, tuple[Candidate, SimilarityStage]] = {}
    for cand in head:
        stage = profile_of(cand.payload).similarity
        if stage is not None and signal in cand.signals:
            staged[cand.id] = (cand, stage)
            cand.signals.pop("neighbour", None)  # the first pass's: its mates' old scores
            fuse_staged(cand, stage, weights_of, signal)
    mates = {memory_id: cand for memory_id, (cand, _) in staged.items()}
    near = neighbour_scores(mates)
    record(mates, "neighbour", near)
    for memory_id in near:
        cand, stage = staged[memory_id]
        near_signal = cand.signals["neighbour"]
        near_signal.value = near_signal.score  # a fused score: already in [0, 1]
        fuse_staged(cand, stage, weights_of, signal)
    return sorted(head, key=lambda c: (-c.score, c.id))


def staged_weights(
    stage: SimilarityStage, weights_of: WeightsOf, signal: str
) -> Mapping[str, float]:
    """The stage's weight of each signal, the similarity's under ``signal``."""
    return {**weights_of(stage.first), signal: stage.rerank}


def fuse_staged(
    cand: Candidate, stage: SimilarityStage, weights_of: WeightsOf, signal: str
) -> None:
    """Fuse ``cand`` with the stage's bias and weights."""
    fuse_calibrated(cand, staged_weights(stage, weights_of, signal), stage.first.bias)
