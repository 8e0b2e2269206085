"""The ``cross-encoder`` reranker: scores (query, document) pairs with a local CrossEncoder."""

from __future__ import annotations

from typing import Any

from memoweave.errors import RerankerError
from memoweave.providers.reranker_support import PairScoringReranker
from memoweave_sentence_transformers._loading import (
    import_sentence_transformers,
    load_failure,
    resolve_model,
)
from memoweave_sentence_transformers.config import CrossEncoderConfig


class CrossEncoderReranker(PairScoringReranker):
    """Reranks with a single-label CrossEncoder loaded offline at construction.

    Every document is scored against the query in batches of ``config.batch_size``;
    results are sorted by score descending, ties keep input order (the contract's checks
    and errors: :class:`~memoweave.providers.reranker_support.PairScoringReranker`).
    """

    def __init__(self, config: CrossEncoderConfig) -> None:
        self.config = config
        self._model_name = resolve_model(config.model, RerankerError)
        super().__init__(model=self._model_name, engine="the cross-encoder")
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

    def _scores(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Every pair in one ``predict`` call (batches of ``config.batch_size``)."""
        raw = self._model.predict(
            pairs, batch_size=self.config.batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        return [float(s) for s in raw.reshape(-1)]

    def _release(self) -> None:
        """Drop the model."""
        self._model = None
