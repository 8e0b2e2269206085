"""What the plugin's two rerankers share: a model folder's onnxruntime session and
tokenizer, and the error for a model of the wrong kind. The reranker contract's checks
and errors come from the core's :class:`~memoweave.providers.reranker_support.PairScoringReranker`:
a subclass scores validated (query, document) pairs in ``_scores``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memoweave.errors import RerankerError
from memoweave.providers.reranker_support import PairScoringReranker
from memoweave_onnx.config import OnnxRerankerConfig
from memoweave_onnx.runtime import import_runtime, load_session, load_tokenizer


class OnnxPairScorer(PairScoringReranker):
    """A reranker over one ONNX model loaded at construction."""

    def __init__(self, config: OnnxRerankerConfig, files: tuple[Path, Path]) -> None:
        """Load ``files`` (the ONNX model and tokenizer.json) as ``config`` says."""
        model_path, tokenizer_path = files
        super().__init__(model=str(model_path), engine="onnxruntime")
        self.model_path = model_path
        self._np, ort, tokenizers = import_runtime(RerankerError)
        self._tokenizer = load_tokenizer(
            tokenizers, tokenizer_path, config.max_length, RerankerError
        )
        self._session: Any = load_session(  # scores compared across calls: one graph
            ort, model_path, config.intra_op_threads, RerankerError, staged=False
        )
        self._input_names = {item.name for item in self._session.get_inputs()}

    def _bad_model(self, problem: str, hint: str) -> RerankerError:
        """The error for a model that is not the kind this reranker runs."""
        return RerankerError(
            f"ONNX model {self.model_path} {problem}",
            hint=hint,
            details={"reason": "bad_model", "path": str(self.model_path)},
        )

    def _release(self) -> None:
        """Drop the onnxruntime session."""
        self._session = None
