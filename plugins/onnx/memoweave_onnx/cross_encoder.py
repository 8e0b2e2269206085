"""The ``onnx`` reranker: a cross-encoder on onnxruntime, no PyTorch.

Each (query, memory) pair is tokenized as one sequence (``[CLS] query [SEP] memory
[SEP]``, truncated to ``max_length`` tokens), pairs are sorted by length and run in
batches, and the model's single relevance logit becomes the score (``sigmoid`` by
default, so a score is the model's probability that the memory answers the query and
means the same across queries). Results are sorted by score, ties keep input order.
"""

from __future__ import annotations

from memoweave_onnx._resources import cross_encoder_dir
from memoweave_onnx.config import OnnxCrossEncoderConfig
from memoweave_onnx.pair_scorer import OnnxPairScorer
from memoweave_onnx.runtime import batch_feed


class OnnxCrossEncoder(OnnxPairScorer):
    """Reranks with a single-label ONNX cross-encoder loaded at construction."""

    def __init__(self, config: OnnxCrossEncoderConfig | None = None) -> None:
        self.config = config or OnnxCrossEncoderConfig()
        super().__init__(self.config, cross_encoder_dir(self.config.model_dir))
        labels = self._session.get_outputs()[0].shape[-1]
        if "input_ids" not in self._input_names or labels not in (1, "1"):
            raise self._bad_model(
                f"is not a single-label cross-encoder (inputs {sorted(self._input_names)}, "
                f"{labels} outputs)",
                "Use a relevance cross-encoder export with one output logit.",
            )

    @property
    def scores_are_probabilities(self) -> bool:
        """``True`` with ``activation: sigmoid`` (the default), ``False`` for raw logits."""
        return self.config.activation == "sigmoid"

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
