"""The ``sentence-transformers`` embedder: a local SentenceTransformer model, offline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memoweave.errors import EmbeddingError, MemoweaveError
from memoweave.providers.checks import check_purpose, check_texts
from memoweave.providers.embedder import Embedder, Purpose
from memoweave_sentence_transformers._loading import (
    import_sentence_transformers,
    load_failure,
    resolve_model,
    set_threads,
)
from memoweave_sentence_transformers.config import SentenceTransformerConfig


class SentenceTransformerEmbedder(Embedder):
    """Embeds texts with a SentenceTransformer model loaded at construction.

    Vectors are float32 converted to Python floats, L2-normalised unless
    ``config.normalize`` is false. ``purpose`` selects ``query_prompt`` or
    ``document_prompt`` (prepended to every text; empty prompts add nothing).
    """

    def __init__(self, config: SentenceTransformerConfig | None = None) -> None:
        self.config = config or SentenceTransformerConfig()
        self._model_name = resolve_model(self.config.model, EmbeddingError)
        st = import_sentence_transformers(EmbeddingError)
        set_threads(self.config.threads)
        try:
            self._model: Any = st.SentenceTransformer(
                self._model_name,
                device=self.config.device,
                local_files_only=True,
                trust_remote_code=self.config.trust_remote_code,
            )
        except Exception as exc:  # any loader failure becomes a typed error
            raise load_failure(self._model_name, exc, EmbeddingError) from exc
        if self.config.max_seq_length is not None:
            self._model.max_seq_length = self.config.max_seq_length
        getter = getattr(self._model, "get_embedding_dimension", None)
        dims = getter() if getter else self._model.get_sentence_embedding_dimension()
        self._dims: int | None = int(dims) if dims else None
        self._closed = False

    @property
    def dims(self) -> int | None:
        return self._dims

    @property
    def model_name(self) -> str:
        """The resolved model path or name."""
        return self._model_name

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        items = check_texts(texts)
        check_purpose(purpose)
        if not items:
            return []
        if self._closed:
            raise EmbeddingError(
                "the embedder is closed", hint="Create a new embedder after close()."
            )
        prompt = self.config.query_prompt if purpose == "query" else self.config.document_prompt
        try:
            matrix = self._model.encode(
                items,
                prompt=prompt or None,
                batch_size=self.config.batch_size,
                normalize_embeddings=self.config.normalize,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except MemoweaveError:
            raise
        except Exception as exc:
            raise EmbeddingError(
                f"sentence-transformers failed to embed {len(items)} texts: {exc}",
                details={"model": self._model_name},
            ) from exc
        if matrix.ndim != 2 or matrix.shape[0] != len(items):
            raise EmbeddingError(
                f"model returned shape {tuple(matrix.shape)} for {len(items)} texts",
                hint="Use a model whose output is one sentence embedding per text.",
                details={"model": self._model_name},
            )
        self._dims = int(matrix.shape[1])
        return matrix.astype("float32").tolist()

    def close(self) -> None:
        """Drop the model reference; later ``embed`` calls raise ``EmbeddingError``."""
        self._closed = True
        self._model = None
