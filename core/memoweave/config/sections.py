"""The ``extraction`` and ``retrieval`` sections of ``MemoryConfig``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memoweave.config.base import ConfigModel


class ExtractionConfig(ConfigModel):
    """How ``add(infer=True)`` turns messages into memories."""

    strategy: Literal["additive", "decide"] = Field(
        default="additive",
        description="additive: one LLM call that extracts new facts and marks superseded ones; "
        "decide: extract facts, then ADD/UPDATE/DELETE/NONE over related memories.",
    )
    window_messages: int = Field(
        default=6, ge=0, le=100, description="Earlier messages of the scope shown to the LLM."
    )
    related_limit: int = Field(
        default=10, ge=0, le=100, description="Related existing memories shown to the LLM."
    )
    custom_instructions: str | None = Field(
        default=None, description="Extra rules appended to the extraction prompt."
    )
    max_repair_attempts: int = Field(
        default=1,
        ge=0,
        le=3,
        description="Retries that carry the validation error back to the LLM.",
    )
    max_answer_tokens: int | None = Field(
        default=2048,
        ge=16,
        description="Completion budget of one extraction answer (bounds a model that "
        "repeats itself); null leaves it to the server.",
    )
    max_memories_per_add: int = Field(
        default=50,
        ge=1,
        le=1000,
        description="Most memories (facts, events) one LLM answer may write; a longer "
        "answer is repaired once, then the add fails with llm_error and writes nothing.",
    )


class RetrievalConfig(ConfigModel):
    """How ``search`` ranks memories (see docs/retrieval.md)."""

    candidates: int = Field(
        default=50, ge=1, le=1000, description="Candidates taken from each signal before fusion."
    )
    keyword_source: Literal["core", "store", "auto"] = Field(
        default="core",
        description="core: the core's BM25 index beside the history (lemmas, CJK bigrams); "
        "store: the vector store's native keyword search; auto: the store's when it has one.",
    )
    fusion: Literal["calibrated", "rrf"] = Field(
        default="calibrated",
        description="calibrated: logistic fusion of bounded signal values with fitted "
        "weights, a score comparable across queries; rrf: weighted reciprocal-rank fusion.",
    )
    rrf_k: int = Field(default=60, ge=1)
    dense_weight: float | None = Field(
        default=None, ge=0, description="Override of the fitted weight (scores lose calibration)."
    )
    keyword_weight: float | None = Field(default=None, ge=0, description="As dense_weight.")
    entity_weight: float | None = Field(default=None, ge=0, description="As dense_weight.")
    time_weight: float | None = Field(default=None, ge=0, description="As dense_weight.")
    recency_weight: float | None = Field(
        default=None, ge=0, description="Off unless set (newer memories score higher)."
    )
    graph_weight: float = Field(
        default=1.0,
        ge=0,
        description="Weight of the graph signal (with a graph_store), on the same logit scale "
        "as the fitted ones; not fitted yet (no labelled graph data).",
    )
    graph_hops: int = Field(
        default=2, ge=1, le=5, description="Hops walked from the query's entities."
    )
    graph_relations: int = Field(
        default=10, ge=0, le=100, description="Relations returned beside the results."
    )
    recency_half_life_days: float = Field(
        default=30.0, gt=0, description="Age at which the recency signal is 0.5."
    )
    rerank_top_n: int = Field(
        default=20,
        ge=1,
        le=200,
        description="Fused results passed to the reranker (a late-interaction one: "
        "late_interaction_top_n).",
    )
    late_interaction_top_n: int = Field(
        default=50,
        ge=1,
        le=200,
        description="Fused results a late-interaction model scores: the late_interaction "
        "section's at every search, or a reranker of similarities with rerank=True "
        "(docs/retrieval.md, 'Late interaction').",
    )
    answer_check: bool = Field(
        default=True,
        description="With a reranker of probabilities: ask it again without each query word "
        "the first fact lacks, and lower every score when one counts against it "
        "(docs/retrieval.md, 'The answer check'); about one reranker pair per missing word.",
    )


class LimitsConfig(ConfigModel):
    """Input limits the public API enforces with a ``ValidationError`` (see RELIABILITY.md)."""

    max_text_chars: int = Field(
        default=200_000,
        ge=1,
        le=100_000_000,
        description="Characters one add() (all its messages together) or update() may carry. "
        "Every step is linear in the text; 200,000 characters take about a second.",
    )
