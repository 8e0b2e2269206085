"""Late interaction: a reranker whose scores are similarities joins the first pass of the
fused top (each memory fused again with its kind's similarity stage, the neighbour pass
run again among them), ``threshold`` applying to that score; a kind without a stage keeps
its first-pass score; the answer check is a cross-encoder's only."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence
from typing import Any

import pytest

from memoweave.errors import ConfigError, ProviderNotFound
from memoweave.providers.reranker import RankedDocument, Reranker, ranked
from memoweave.retrieval.profiles import PROFILES, SimilarityStage

from .conftest import BuildMemory, add_texts
from .test_rerank_fusion import ANSWER, QUERY, TEXTS

STAGE = PROFILES["fact"].similarity
TURN_STAGE = PROFILES["turn"].similarity


@pytest.fixture(params=["sync", "async"])
def api(request: pytest.FixtureRequest) -> str:
    """Both ``Memory`` and ``AsyncMemory`` (the stage runs in the shared pipeline)."""
    return str(request.param)


class WordsSimilarity(Reranker):
    """Scores a document by the share of the query's longer words it contains (``goldfish``
    counts for ``fish``): a similarity in [0, 1]."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.pair_calls = 0

    @property
    def scores_are_similarities(self) -> bool:
        return True

    def rerank(self, query: str, documents: Sequence[str], top_k: int) -> list[RankedDocument]:
        self.calls.append(len(documents))
        words = {w for w in re.findall(r"\w+", query.lower()) if len(w) > 3}
        scores = [
            sum(any(w in t for t in re.findall(r"\w+", d.lower())) for w in words) / len(words)
            for d in documents
        ]
        return ranked(documents, scores, top_k)

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.pair_calls += 1
        return super().score_pairs(pairs)


def stage_logit(
    explain: dict[str, Any], with_neighbour: bool = True, stage: SimilarityStage | None = STAGE
) -> float:
    """A similarity stage's logit of a memory from its explained signal values."""
    assert stage is not None
    weights = {**stage.first.weights(), "rerank": stage.rerank}
    return stage.first.bias + sum(
        weights.get(name, 0.0) * signal["value"]
        for name, signal in explain.items()
        if with_neighbour or name != "neighbour"
    )


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


def test_both_kinds_have_a_similarity_stage() -> None:
    assert STAGE is not None and STAGE.rerank > 0
    assert TURN_STAGE is not None and TURN_STAGE.rerank > 0


def test_similarities_join_the_first_pass_of_the_top(build_memory: BuildMemory) -> None:
    reranker = WordsSimilarity()
    memory = build_memory(retrieval={"late_interaction_top_n": 5}, reranker=reranker)
    add_texts(memory, TEXTS)
    hits = memory.search(QUERY, user_id="alice", explain=True, rerank=True)["results"]
    assert reranker.calls == [5] and reranker.pair_calls == 0  # no answer check
    assert hits[0]["memory"] == ANSWER
    for hit in hits:
        explain = hit["explain"]
        assert 0.0 <= explain["rerank"]["value"] == explain["rerank"]["score"] <= 1.0
        assert hit["score"] == pytest.approx(sigmoid(stage_logit(explain)))
        assert sum(s["contribution"] for s in explain.values()) == pytest.approx(hit["score"])
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    cut = hits[1]["score"]  # threshold: on the stage's score
    kept = memory.search(QUERY, user_id="alice", rerank=True, threshold=cut)["results"]
    assert [h["id"] for h in kept] == [h["id"] for h in hits[:2]]


def test_facts_of_one_moment_are_neighbours_again_in_the_stage(build_memory: BuildMemory) -> None:
    memory = build_memory(retrieval={"late_interaction_top_n": 5}, reranker=WordsSimilarity())
    add_texts(memory, TEXTS[:3], observed_at="2024-05-01T10:00:00+00:00")
    add_texts(memory, TEXTS[3:], observed_at="2024-06-01T10:00:00+00:00")
    hits = memory.search(QUERY, user_id="alice", explain=True, rerank=True)["results"]
    moment = {h["id"]: h["memory"] in TEXTS[:3] for h in hits}
    before = {h["id"]: sigmoid(stage_logit(h["explain"], with_neighbour=False)) for h in hits}
    for hit in hits:
        mates = [before[i] for i in before if i != hit["id"] and moment[i] == moment[hit["id"]]]
        assert hit["explain"]["neighbour"]["score"] == pytest.approx(max(mates))
        assert hit["score"] == pytest.approx(sigmoid(stage_logit(hit["explain"])))


def test_results_past_the_top_keep_their_first_pass(build_memory: BuildMemory) -> None:
    reranker = WordsSimilarity()
    memory = build_memory(
        retrieval={"late_interaction_top_n": 2, "rerank_top_n": 5}, reranker=reranker
    )
    add_texts(memory, TEXTS)
    plain = memory.search(QUERY, user_id="alice", top_k=5)["results"]
    hits = memory.search(QUERY, user_id="alice", top_k=5, rerank=True, explain=True)["results"]
    assert reranker.calls == [2] and len(hits) == 5
    assert {h["id"] for h in hits[:2]} == {h["id"] for h in plain[:2]}
    tail = hits[2:]
    assert [(h["id"], h["score"]) for h in tail] == [(h["id"], h["score"]) for h in plain[2:]]
    assert not any("rerank" in h["explain"] for h in tail)


def test_turns_are_staged_with_their_nearby_turns(build_memory: BuildMemory) -> None:
    memory = build_memory(retrieval={"late_interaction_top_n": 5}, reranker=WordsSimilarity())
    messages = [{"role": "user", "content": text} for text in TEXTS]
    memory.add(messages, user_id="alice", infer=False)
    hits = memory.search(QUERY, user_id="alice", top_k=5, rerank=True, explain=True)["results"]
    assert hits[0]["memory"] == ANSWER
    before = {
        h["memory"]: sigmoid(stage_logit(h["explain"], with_neighbour=False, stage=TURN_STAGE))
        for h in hits
    }
    for hit in hits:  # the best turn at most two positions away, in the same add
        position = TEXTS.index(hit["memory"])
        near = [before[t] for t in TEXTS if 0 < abs(TEXTS.index(t) - position) <= 2]
        assert hit["explain"]["neighbour"]["score"] == pytest.approx(max(near))
        assert hit["score"] == pytest.approx(sigmoid(stage_logit(hit["explain"], stage=TURN_STAGE)))


def test_a_kind_without_a_stage_keeps_its_first_pass_score(
    build_memory: BuildMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(PROFILES, "fact", dataclasses.replace(PROFILES["fact"], similarity=None))
    memory = build_memory(retrieval={"late_interaction_top_n": 5}, reranker=WordsSimilarity())
    add_texts(memory, TEXTS)
    plain = memory.search(QUERY, user_id="alice", top_k=5)["results"]
    hits = memory.search(QUERY, user_id="alice", top_k=5, rerank=True, explain=True)["results"]
    assert [(h["id"], h["score"]) for h in hits] == [(h["id"], h["score"]) for h in plain]
    assert all("rerank" in h["explain"] for h in hits)


def test_with_rrf_fusion_the_similarity_is_a_score_of_its_own(build_memory: BuildMemory) -> None:
    memory = build_memory(retrieval={"fusion": "rrf"}, reranker=WordsSimilarity())
    add_texts(memory, TEXTS)
    hits = memory.search(QUERY, user_id="alice", explain=True, rerank=True)["results"]
    assert hits[0]["memory"] == ANSWER
    for rank, hit in enumerate(hits, start=1):
        assert hit["explain"]["rerank"] == {"score": hit["score"], "rank": rank}


def late_logit(explain: dict[str, Any], stage: SimilarityStage | None = STAGE) -> float:
    """The late-interaction stage's logit from the explained values (``late``, no rerank)."""
    assert stage is not None
    weights = {**stage.first.weights(), "late": stage.rerank}
    return stage.first.bias + sum(
        weights.get(name, 0.0) * signal["value"]
        for name, signal in explain.items()
        if name not in ("rerank", "answer_check")
    )


def test_the_late_interaction_section_joins_every_search(build_memory: BuildMemory) -> None:
    late = WordsSimilarity()
    memory = build_memory(retrieval={"late_interaction_top_n": 5}, late_interaction=late)
    add_texts(memory, TEXTS)
    hits = memory.search(QUERY, user_id="alice", top_k=5, explain=True)["results"]
    assert late.calls == [5] and hits[0]["memory"] == ANSWER  # fifth in the first pass
    for hit in hits:
        assert 0.0 <= hit["explain"]["late"]["value"] <= 1.0
        assert hit["score"] == pytest.approx(sigmoid(late_logit(hit["explain"])))
    cut = hits[1]["score"]
    kept = memory.search(QUERY, user_id="alice", threshold=cut)["results"]
    assert [h["id"] for h in kept] == [h["id"] for h in hits[:2]]


def test_the_late_interaction_section_scores_its_top_n_only(build_memory: BuildMemory) -> None:
    late = WordsSimilarity()
    memory = build_memory(retrieval={"late_interaction_top_n": 2}, late_interaction=late)
    add_texts(memory, TEXTS)
    plain = build_memory()
    add_texts(plain, TEXTS)
    first = plain.search(QUERY, user_id="alice", top_k=5)["results"]
    hits = memory.search(QUERY, user_id="alice", top_k=5, explain=True)["results"]
    assert late.calls == [2]
    assert {h["memory"] for h in hits[:2]} == {h["memory"] for h in first[:2]}
    tail = [(h["memory"], h["score"]) for h in hits[2:]]
    assert tail == [(h["memory"], h["score"]) for h in first[2:]]
    assert not any("late" in h["explain"] for h in hits[2:])


def test_a_cross_encoder_reranks_the_late_stage(build_memory: BuildMemory) -> None:
    from .test_rerank_fusion import WordsReranker

    memory = build_memory(
        retrieval={"answer_check": False, "rerank_top_n": 3},
        late_interaction=WordsSimilarity(),
        reranker=WordsReranker(probabilities=True),
    )
    add_texts(memory, TEXTS)
    hits = memory.search(QUERY, user_id="alice", top_k=5, rerank=True, explain=True)["results"]
    assert hits[0]["memory"] == ANSWER
    stage = PROFILES["fact"].reranked
    for hit in hits[:3]:  # the cross-encoder's stage on the late stage's logit
        explain = hit["explain"]
        z = (
            stage.bias
            + stage.fused * late_logit(explain)
            + stage.rerank * explain["rerank"]["value"]
        )
        assert hit["score"] == pytest.approx(sigmoid(z))
        assert sum(s["contribution"] for s in explain.values()) == pytest.approx(hit["score"])


def test_the_late_interaction_section_needs_similarities(memory_factory: Any) -> None:
    from .test_rerank_fusion import WordsReranker

    with pytest.raises(ConfigError) as info:
        memory_factory(late_interaction=WordsReranker(probabilities=True))
    assert info.value.details["path"] == "late_interaction.provider"
    with pytest.raises(ProviderNotFound) as missing:
        memory_factory({"late_interaction": {"provider": "no-such-reranker"}})
    assert "no-such-reranker" in missing.value.message


def test_beside_the_late_interaction_section_the_reranker_is_a_cross_encoder(
    memory_factory: Any,
) -> None:
    """Two similarity models: rerank=True would score the late stage's top again in its
    place. Refused at open, naming the reranker section."""
    with pytest.raises(ConfigError) as info:
        memory_factory(late_interaction=WordsSimilarity(), reranker=WordsSimilarity())
    assert info.value.details["path"] == "reranker.provider"
    assert "cross-encoder" in info.value.hint
