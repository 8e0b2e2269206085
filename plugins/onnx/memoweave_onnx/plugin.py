"""Hook implementation: registers the ``onnx`` embedder (imports nothing heavy)."""

from __future__ import annotations

from memoweave.hookspecs import Register, hookimpl
from memoweave.providers.embedder import Embedder
from memoweave_onnx.config import OnnxEmbedderConfig

MEMOWEAVE_PLUGIN_API = 1
"""The memoweave plugin API this plugin is built for (checked by the plugin host)."""


def _make_embedder(config: OnnxEmbedderConfig) -> Embedder:
    from memoweave_onnx.embedder import OnnxEmbedder

    return OnnxEmbedder(config)


@hookimpl
def register_embedders(register: Register) -> None:
    register(
        "onnx",
        _make_embedder,
        config_model=OnnxEmbedderConfig,
        description="all-MiniLM-L6-v2 int8 on onnxruntime (no PyTorch), offline; fast default.",
    )
