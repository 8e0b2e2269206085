"""The ``onnx-colbert`` reranker: late interaction (MaxSim) on onnxruntime, no PyTorch.

The query and each memory are encoded apart into one vector per token (the encoder's
token states, each normalised). A memory's similarity is MaxSim: for every token of the
query (its ``[CLS]`` and ``[SEP]`` left out) the best cosine with any token of the memory,
averaged over the query's tokens. Unlike one pooled vector, it keeps which words of the
query a memory covers, and unlike a cross-encoder each memory is encoded once, without
the query. The score is that mean rescaled from [``similarity_floor``, 1] to [0, 1] and
clipped (:attr:`scores_are_similarities`), so search weighs it beside the dense cosine
(docs/retrieval.md, "Late interaction"). Memories are sorted by length and run in
batches; padding is masked out of the maximum. The token vectors of the last
``cache_size`` memories scored are kept (float16, by text, least recently used dropped
first), so a scope searched again encodes only its new memories.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from memoweave_onnx._resources import late_interaction_dir
from memoweave_onnx.config import OnnxLateInteractionConfig
from memoweave_onnx.pair_scorer import OnnxPairScorer
from memoweave_onnx.runtime import batch_feed


class OnnxLateInteraction(OnnxPairScorer):
    """Scores memories by MaxSim with an ONNX token encoder loaded at construction."""

    def __init__(self, config: OnnxLateInteractionConfig | None = None) -> None:
        self.config = config or OnnxLateInteractionConfig()
        super().__init__(self.config, late_interaction_dir(self.config.model_dir))
        self._cache: OrderedDict[str, Any] = OrderedDict()  # memory text -> token vectors
        self._lock = threading.Lock()
        shape = self._session.get_outputs()[0].shape
        if "input_ids" not in self._input_names or len(shape) != 3:
            raise self._bad_model(
                f"does not output token states (inputs {sorted(self._input_names)}, first "
                f"output of shape {shape})",
                "Use an encoder export whose first output is last_hidden_state "
                "(batch, tokens, width).",
            )

    @property
    def scores_are_similarities(self) -> bool:
        """Always ``True``: every score is a rescaled MaxSim in [0, 1]."""
        return True

    def _scores(self, pairs: list[tuple[str, str]]) -> list[float]:
        np = self._np
        distinct = list(dict.fromkeys(query for query, _ in pairs))
        # the query's tokens without [CLS] and [SEP]; each distinct query encoded once
        queries = dict(zip(distinct, (v[1:-1] for v in self._encode(distinct)), strict=True))
        docs = self._documents(list(dict.fromkeys(doc for _, doc in pairs)))
        floor = self.config.similarity_floor
        scores = []
        for query, doc in pairs:
            tokens, vectors = queries[query], docs[doc]
            if len(tokens) == 0 or len(vectors) == 0:  # nothing to match: the floor
                scores.append(0.0)
                continue
            best = (tokens @ vectors.astype(np.float32).T).max(axis=1)
            maxsim = float(best.mean())
            scores.append(min(1.0, max(0.0, (maxsim - floor) / (1.0 - floor))))
        return scores

    def _documents(self, texts: list[str]) -> dict[str, Any]:
        """Each text's token vectors (float16), from the cache or encoded now (and kept)."""
        with self._lock:
            found = {t: self._cache[t] for t in texts if t in self._cache}
            for text in found:
                self._cache.move_to_end(text)
        missing = [t for t in texts if t not in found]
        if missing:
            encoded = {
                t: v.astype(self._np.float16)
                for t, v in zip(missing, self._encode(missing), strict=True)
            }
            found.update(encoded)
            with self._lock:
                for text, vectors in encoded.items():
                    self._cache[text] = vectors
                while len(self._cache) > self.config.cache_size:
                    self._cache.popitem(last=False)
        return found

    def _encode(self, texts: list[str]) -> list[Any]:
        """Each text's normalised token vectors (padding left out), in input order."""
        np = self._np
        encodings = self._tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out: list[Any] = [None] * len(texts)
        size = self.config.batch_size
        for start in range(0, len(order), size):
            chunk = order[start : start + size]
            feed = batch_feed(np, [encodings[i] for i in chunk], self._input_names)
            states = self._session.run(None, feed)[0]
            for row, i in enumerate(chunk):
                vectors = states[row, : len(encodings[i].ids)].astype(np.float32)
                norms = np.linalg.norm(vectors, axis=1, keepdims=True)
                out[i] = vectors / np.maximum(norms, 1e-12)
        return out

    def _release(self) -> None:
        """Drop the session and the cached token vectors."""
        super()._release()
        with self._lock:
            self._cache.clear()
