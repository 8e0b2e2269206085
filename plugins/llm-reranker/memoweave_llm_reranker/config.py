"""Configuration model of the ``llm`` reranker (validated by the registry)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class LLMSpec(BaseModel):
    """Which LLM scores the documents: a provider name and its own config mapping."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    provider: str = Field(min_length=1, description="LLM provider name, e.g. openai, ollama.")
    config: dict[str, Any] = Field(default_factory=dict, description="That provider's config.")


class LLMRerankerConfig(BaseModel):
    """Config of the ``llm`` reranker.

    All candidates go into one prompt (a numbered list); the LLM answers
    ``{"scores": [s1, ..., sN]}`` with integers 0-10. An unusable answer gets one repair
    retry (``repair_retries``), then ``RerankerError``.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    llm: LLMSpec = Field(description="The LLM provider spec, created through the registry.")
    max_documents: int = Field(
        default=50, ge=1, le=500, description="Most documents accepted in one call."
    )
    max_document_chars: int = Field(
        default=1000, ge=20, description="Each document is cut to this many characters."
    )
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int | None = Field(
        default=None, ge=1, description="Answer token limit (default: 8 per document + 32)."
    )
    repair_retries: int = Field(
        default=1, ge=0, le=3, description="Extra calls after an unusable answer."
    )
