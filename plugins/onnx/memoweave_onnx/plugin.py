"""Hook implementation: registers the ``onnx`` embedder and rerankers (imports nothing heavy)."""

from __future__ import annotations

from memoweave.hookspecs import Register, hookimpl
from memoweave.providers.embedder import Embedder
from memoweave.providers.reranker import Reranker
from memoweave_onnx.config import (
    OnnxCrossEncoderConfig,
    OnnxEmbedderConfig,
    OnnxLateInteractionConfig,
)

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


def _make_embedder(config: OnnxEmbedderConfig) -> Embedder:
    from memoweave_onnx.embedder import OnnxEmbedder

    return OnnxEmbedder(config)


def _make_reranker(config: OnnxCrossEncoderConfig) -> Reranker:
    from memoweave_onnx.cross_encoder import OnnxCrossEncoder

    return OnnxCrossEncoder(config)


def _make_late_interaction(config: OnnxLateInteractionConfig) -> Reranker:
    from memoweave_onnx.late_interaction import OnnxLateInteraction

    return OnnxLateInteraction(config)


@hookimpl
def register_embedders(register: Register) -> None:
    register(
        "onnx",
        _make_embedder,
        config_model=OnnxEmbedderConfig,
        description="all-MiniLM-L6-v2 int8 on onnxruntime (no PyTorch), offline; fast default.",
    )


@hookimpl
def register_rerankers(register: Register) -> None:
    register(
        "onnx",
        _make_reranker,
        config_model=OnnxCrossEncoderConfig,
        description="ms-marco-MiniLM-L-12-v2 int8 cross-encoder on onnxruntime (no PyTorch), "
        "offline; scores are probabilities.",
    )
    register(
        "onnx-colbert",
        _make_late_interaction,
        config_model=OnnxLateInteractionConfig,
        description="answerai-colbert-small-v1 int8 late interaction (MaxSim) on onnxruntime "
        "(no PyTorch), offline; scores are similarities fused into the first pass.",
    )
