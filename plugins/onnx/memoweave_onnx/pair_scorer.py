"""What the plugin's two rerankers share: a model folder's onnxruntime session and
tokenizer, the reranker contract's checks, and one ``RerankerError`` for any failure.

A subclass scores validated (query, document) pairs in :meth:`OnnxPairScorer._scores`;
``rerank`` and ``score_pairs`` give the same pair the same score (the same batches).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memoweave.errors import MemoweaveError, RerankerError
from memoweave.providers.checks import check_pairs, check_query, check_texts, check_top_k
from memoweave.providers.reranker import RankedDocument, Reranker, ranked
from memoweave_onnx.runtime import import_runtime, load_session, load_tokenizer


class OnnxPairScorer(Reranker):
    """A reranker over one ONNX model loaded at construction."""

    def __init__(
        self, model_path: Path, tokenizer_path: Path, *, max_length: int, threads: int
    ) -> None:
        self.model_path = model_path
        self._np, ort, tokenizers = import_runtime(RerankerError)
        self._tokenizer = load_tokenizer(tokenizers, tokenizer_path, max_length, RerankerError)
        self._session: Any = load_session(  # scores compared across calls: one graph
            ort, model_path, threads, RerankerError, staged=False
        )
        self._input_names = {item.name for item in self._session.get_inputs()}

    def _bad_model(self, problem: str, hint: str) -> RerankerError:
        """The error for a model that is not the kind this reranker runs."""
        return RerankerError(
            f"ONNX model {self.model_path} {problem}",
            hint=hint,
            details={"reason": "bad_model", "path": str(self.model_path)},
        )

    def rerank(self, query: str, documents: Sequence[str], top_k: int) -> list[RankedDocument]:
        check_query(query)
        docs = check_texts(documents, what="documents")
        check_top_k(top_k)
        if not docs:
            return []
        return ranked(docs, self._run([(query, doc) for doc in docs]), top_k)

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Every (query, document) pair scored in the same batches as :meth:`rerank`."""
        checked = check_pairs(pairs)
        return self._run(checked) if checked else []

    def _run(self, pairs: list[tuple[str, str]]) -> list[float]:
        """The scores of ``pairs`` (validated), as ``RerankerError`` on failure."""
        if self._session is None:
            raise RerankerError("the reranker is closed", hint="Create a new one after close().")
        try:
            return self._scores(pairs)
        except MemoweaveError:
            raise
        except Exception as exc:
            raise RerankerError(
                f"onnxruntime failed to score {len(pairs)} pairs: {exc}",
                details={"model": str(self.model_path)},
            ) from exc

    @abstractmethod
    def _scores(self, pairs: list[tuple[str, str]]) -> list[float]:
        """One score per validated pair, in input order."""

    def close(self) -> None:
        """Release the session; later ``rerank`` calls raise ``RerankerError``."""
        self._session = None
