"""Reading a sentence-transformers model folder exported to ONNX (no torch, no download).

A folder saved by sentence-transformers with the ONNX backend (or any folder laid out the
same way, e.g. bge / e5 / gte exports) holds:

- the ONNX encoder: ``onnx/model.onnx`` (or ``model.onnx`` at the top; ``onnx_file``
  picks another, e.g. ``onnx/model_qint8_avx512.onnx``);
- ``tokenizer.json`` (a Hugging Face fast tokenizer);
- ``modules.json``: the pipeline; a ``sentence_transformers.models.Normalize`` module
  means the vectors are L2-normalised;
- the pooling module's ``config.json`` (``1_Pooling/config.json``): which of the
  ``pooling_mode_*`` flags is set (cls, mean, max, mean_sqrt_len, lasttoken);
- ``sentence_bert_config.json``: ``max_seq_length``;
- ``config_sentence_transformers.json``: ``prompts`` for queries and documents.

Every file but the encoder and the tokenizer is optional; a missing one keeps the
sentence-transformers default (mean pooling, no normalisation, no prompt).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoweave.errors import EmbeddingError

POOLING_FLAGS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len",
    "pooling_mode_lasttoken": "lasttoken",
}


@dataclass(frozen=True)
class ExportSettings:
    """What a model folder says about how to embed with it."""

    model: Path
    tokenizer: Path
    pooling: str = "mean"
    normalize: bool = False
    max_length: int | None = None
    query_prompt: str = ""
    document_prompt: str = ""


def _bad(folder: Path, message: str, hint: str) -> EmbeddingError:
    return EmbeddingError(
        f"{folder}: {message}", hint=hint, details={"reason": "bad_model", "path": str(folder)}
    )


def _json(folder: Path, name: str) -> Any:
    path = folder / name
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _bad(folder, f"cannot read {name}: {exc}", f"Fix or remove {path}.") from exc


def _pooling(folder: Path, modules: list[dict[str, Any]]) -> str:
    path = next(
        (m.get("path", "") for m in modules if str(m.get("type", "")).endswith(".Pooling")),
        "1_Pooling",
    )
    config = _json(folder, f"{path}/config.json") if path else None
    if not isinstance(config, dict):
        return "mean"
    modes = [mode for flag, mode in POOLING_FLAGS.items() if config.get(flag)]
    unknown = [k for k, v in config.items() if k.startswith("pooling_mode_") and v]
    unknown = [k for k in unknown if k not in POOLING_FLAGS]
    if unknown or len(modes) != 1:
        raise _bad(
            folder,
            f"unsupported pooling in {path}/config.json: {sorted(unknown) or modes}",
            "Use a model with exactly one of cls, mean, max, mean_sqrt_len or lasttoken "
            "pooling, or set config.pooling and drop model_dir.",
        )
    return modes[0]


def _prompts(config: Any) -> tuple[str, str]:
    prompts = config.get("prompts") if isinstance(config, dict) else None
    if not isinstance(prompts, dict):
        return "", ""
    query = prompts.get("query", "")
    document = prompts.get("document", prompts.get("passage", ""))
    if not document and config.get("default_prompt_name"):
        document = prompts.get(config["default_prompt_name"], "")
    return str(query or ""), str(document or "")


def read_export(folder: Path, onnx_file: str | None = None) -> ExportSettings:
    """The settings of the model folder ``folder`` (see the module docstring)."""
    folder = folder.expanduser()
    if not folder.is_dir():
        raise _bad(folder, "not a directory", "Set config.model_dir to a model folder.")
    candidates = [folder / onnx_file] if onnx_file else [folder / "onnx" / "model.onnx"]
    candidates += [] if onnx_file else [folder / "model.onnx"]
    model = next((p for p in candidates if p.is_file()), None)
    if model is None:
        raise _bad(
            folder,
            f"no ONNX encoder ({', '.join(str(p.relative_to(folder)) for p in candidates)})",
            "Export the model to ONNX (SentenceTransformer(..., backend='onnx').save(dir)) "
            "or set config.model_path to its .onnx file.",
        )
    tokenizer = folder / "tokenizer.json"
    if not tokenizer.is_file():
        raise _bad(folder, "no tokenizer.json", "Save the model with its fast tokenizer.")
    modules = _json(folder, "modules.json")
    modules = modules if isinstance(modules, list) else []
    bert = _json(folder, "sentence_bert_config.json")
    max_length = bert.get("max_seq_length") if isinstance(bert, dict) else None
    query, document = _prompts(_json(folder, "config_sentence_transformers.json"))
    return ExportSettings(
        model=model,
        tokenizer=tokenizer,
        pooling=_pooling(folder, modules),
        normalize=any(str(m.get("type", "")).endswith(".Normalize") for m in modules),
        max_length=int(max_length) if isinstance(max_length, int) and max_length > 0 else None,
        query_prompt=query,
        document_prompt=document,
    )
