"""The ``onnx`` reranker: a cross-encoder on onnxruntime, no PyTorch.

Each (query, memory) pair is tokenized as one sequence (``[CLS] query [SEP] memory
[SEP]``, truncated to ``max_length`` tokens), pairs are sorted by length and run in
batches, and the model's single relevance logit becomes the score (``sigmoid`` by
default, so a score is the model's probability that the memory answers the query and
means the same across queries). Results are sorted by score, ties keep input order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memoweave.errors import MemoweaveError, RerankerError
from memoweave.providers.checks import check_pairs, check_query, check_texts, check_top_k
from memoweave.providers.reranker import RankedDocument, Reranker, ranked
from memoweave_onnx._resources import cross_encoder_dir
from memoweave_onnx.config import OnnxCrossEncoderConfig
from memoweave_onnx.runtime import batch_feed, import_runtime, load_session, load_tokenizer


class OnnxCrossEncoder(Reranker):
    """Reranks with a single-label ONNX cross-encoder loaded at construction."""

    def __init__(self, config: OnnxCrossEncoderConfig | None = None) -> None:
        self.config = config or OnnxCrossEncoderConfig()
        self.model_path, tokenizer_path = cross_encoder_dir(self.config.model_dir)
        self._np, ort, tokenizers = import_runtime(RerankerError)
        self._tokenizer = load_tokenizer(
            tokenizers, tokenizer_path, self.config.max_length, RerankerError
        )
        self._session: Any = load_session(  # scores compared across calls: one graph
            ort, self.model_path, self.config.intra_op_threads, RerankerError, staged=False
        )
        self._input_names = {item.name for item in self._session.get_inputs()}
        labels = self._session.get_outputs()[0].shape[-1]
        if "input_ids" not in self._input_names or labels not in (1, "1"):
            raise RerankerError(
                f"ONNX model {self.model_path} is not a single-label cross-encoder "
                f"(inputs {sorted(self._input_names)}, {labels} outputs)",
                hint="Use a relevance cross-encoder export with one output logit.",
                details={"reason": "bad_model", "path": str(self.model_path)},
            )

    @property
    def scores_are_probabilities(self) -> bool:
        """``True`` with ``activation: sigmoid`` (the default), ``False`` for raw logits."""
        return self.config.activation == "sigmoid"

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

    def _scores(self, pairs: list[tuple[str, str]]) -> list[float]:
        np = self._np
        encodings = self._tokenizer.encode_batch(pairs)
        order = sorted(range(len(pairs)), key=lambda i: len(encodings[i].ids))
        logits = np.empty(len(pairs), dtype=np.float64)
        size = self.config.batch_size
        for start in range(0, len(order), size):
            chunk = order[start : start + size]
            feed = batch_feed(np, [encodings[i] for i in chunk], self._input_names)
            logits[chunk] = self._session.run(None, feed)[0].reshape(-1)
        if self.config.activation == "sigmoid":
            logits = 1.0 / (1.0 + np.exp(-logits))
        return [float(s) for s in logits]

    def close(self) -> None:
        """Release the session; later ``rerank`` calls raise ``RerankerError``."""
        self._session = None
