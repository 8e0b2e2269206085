"""The ``cross-encoder`` reranker: scores (query, document) pairs with a local CrossEncoder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memoweave.errors import MemoweaveError, RerankerError
from memoweave.providers.checks import check_pairs, check_query, check_texts, check_top_k
from memoweave.providers.reranker import RankedDocument, Reranker, ranked
from memoweave_sentence_transformers._loading import (
    import_sentence_transformers,
    load_failure,
    resolve_model,
)
from memoweave_sentence_transformers.config import CrossEncoderConfig


class CrossEncoderReranker(Reranker):
    """Reranks with a single-label CrossEncoder loaded offline at construction.

    Every document is scored against the query in batches of ``config.batch_size``;
    results are sorted by score descending, ties keep input order.
    """

    def __init__(self, config: CrossEncoderConfig) -> None:
        self.config = config
        self._model_name = resolve_model(config.model, RerankerError)
        st = import_sentence_transformers(RerankerError)
        try:
            self._model: Any = st.CrossEncoder(
                self._model_name,
                device=config.device,
                local_files_only=True,
                max_length=config.max_length,
                trust_remote_code=config.trust_remote_code,
            )
        except Exception as exc:
            raise load_failure(self._model_name, exc, RerankerError) from exc
        labels = getattr(self._model, "num_labels", 1)
        if labels != 1:
            raise RerankerError(
                f"model {self._model_name!r} has {labels} output labels, expected 1",
                hint="Use a relevance cross-encoder with a single output score.",
                details={"model": self._model_name},
            )
        self._closed = False

    def rerank(self, query: str, documents: Sequence[str], top_k: int) -> list[RankedDocument]:
        check_query(query)
        docs = check_texts(documents, what="documents")
        check_top_k(top_k)
        if not docs:
            return []
        return ranked(docs, self._scores([(query, doc) for doc in docs]), top_k)

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Every (query, document) pair scored in one ``predict`` call, as :meth:`rerank`."""
        checked = check_pairs(pairs)
        return self._scores(checked) if checked else []

    def _scores(self, pairs: list[tuple[str, str]]) -> list[float]:
        if self._closed:
            raise RerankerError("the reranker is closed", hint="Create a new one after close().")
        try:
            raw = self._model.predict(
                pairs,
                batch_size=self.config.batch_size,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except MemoweaveError:
            raise
        except Exception as exc:
            raise RerankerError(
                f"cross-encoder failed on {len(pairs)} pairs: {exc}",
                details={"model": self._model_name},
            ) from exc
        flat = raw.reshape(-1)
        if flat.shape[0] != len(pairs):
            raise RerankerError(
                f"cross-encoder returned {flat.shape[0]} scores for {len(pairs)} pairs",
                hint="Use a relevance cross-encoder with a single output score.",
                details={"model": self._model_name},
            )
        return [float(s) for s in flat]

    def close(self) -> None:
        """Drop the model; later ``rerank`` calls raise ``RerankerError``."""
        self._closed = True
        self._model = None
