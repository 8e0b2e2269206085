"""The ``onnx`` embedder: a BERT-style ONNX encoder + tokenizers, pooled like sentence-transformers.

Pipeline per batch: tokenize (truncate to ``max_length`` tokens, special tokens included),
pad to the longest text of the batch, run the session, mean-pool the last hidden state
over the attention mask (or take [CLS]), L2-normalise. Texts are sorted by length before
batching so padding stays small; results come back in input order. torch is never imported.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from memoweave.errors import EmbeddingError, MemoweaveError
from memoweave.providers.checks import check_purpose, check_texts
from memoweave.providers.embedder import Embedder, Purpose
from memoweave.runtime.background import Background
from memoweave.runtime.overlap import Overlap
from memoweave_onnx._resources import model_file, tokenizer_file
from memoweave_onnx.config import OnnxEmbedderConfig
from memoweave_onnx.model_cache import default_cache_dir
from memoweave_onnx.runtime import (
    HEAP_TRIM,
    batch_feed,
    import_runtime,
    load_session,
    load_tokenizer,
)
from memoweave_onnx.st_export import read_export

_REQUIRED_INPUTS = ("input_ids", "attention_mask")


class OnnxEmbedder(Embedder):
    """Embeds texts with an ONNX encoder (see the module docstring). The model is prepared
    at construction (:mod:`memoweave_onnx.model_cache`), the tokenizer and the onnxruntime
    session are read and built on other threads; the first ``embed`` waits for them and
    raises their error (``bad_tokenizer``, ``bad_model``) if one failed."""

    def __init__(self, config: OnnxEmbedderConfig | None = None) -> None:
        self.config = resolve(config or OnnxEmbedderConfig())
        self.model_path = model_file(self.config.model_path)
        self.tokenizer_path = tokenizer_file(self.config.tokenizer_path)
        # the tokenizer is read on its own thread (tokenizers releases the GIL) while this
        # one imports onnxruntime; the session is built on another from there (the caller
        # opens its store meanwhile); the first embed waits for both
        self._tokenizer: Background[Any] = Background(
            self._read_tokenizer, name="memoweave-onnx-tokenizer"
        )
        self._np, ort, _ = import_runtime(EmbeddingError)
        self._passes = Overlap(name="memoweave-onnx-passes")  # a thread from the first batch
        self._session: Any = load_session(
            ort,
            self.model_path,
            self.config.intra_op_threads,
            EmbeddingError,
            background=True,  # inputs and width come from the prepared model when it parses
            cache_dir=cache_dir(self.config),
        )
        io = self._session.io
        if io is not None:
            self._input_names, last_dim = set(io.inputs), io.output_width
        else:
            self._input_names = {item.name for item in self._session.get_inputs()}
            last_dim = self._session.get_outputs()[0].shape[-1]
        missing = [name for name in _REQUIRED_INPUTS if name not in self._input_names]
        if missing:
            raise EmbeddingError(
                f"ONNX model {self.model_path} lacks inputs {missing}",
                hint="Use a BERT-style encoder export with input_ids and attention_mask inputs.",
                details={"reason": "bad_model", "inputs": sorted(self._input_names)},
            )
        self._dims: int | None = last_dim if isinstance(last_dim, int) else None

    def _read_tokenizer(self) -> Any:
        import tokenizers

        return load_tokenizer(
            tokenizers, self.tokenizer_path, self.config.max_length, EmbeddingError
        )

    @property
    def dims(self) -> int | None:
        return self._dims

    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        items = check_texts(texts)
        check_purpose(purpose)
        if not items:
            return []
        if self._session is None:
            raise EmbeddingError("the embedder is closed", hint="Create a new one after close().")
        prompt = self.config.query_prompt if purpose == "query" else self.config.document_prompt
        if prompt:
            items = [prompt + text for text in items]
        try:
            matrix = self._embed_all(items)
        except MemoweaveError:
            raise
        except Exception as exc:
            raise EmbeddingError(
                f"onnxruntime failed to embed {len(items)} texts: {exc}",
                details={"model": str(self.model_path)},
            ) from exc
        self._dims = int(matrix.shape[1])
        return matrix.tolist()

    def _embed_all(self, items: list[str]) -> Any:
        np = self._np
        encodings = self._tokenizer.result().encode_batch(items)
        order = sorted(range(len(items)), key=lambda i: len(encodings[i].ids))
        widths = [len(encodings[i].ids) for i in order]
        spans = batches(widths, self.config.batch_size, self.config.batch_tokens)
        chunks = [order[start:stop] for start, stop in spans]
        with HEAP_TRIM.busy():
            if len(chunks) == 1:
                vectors = [self._run([encodings[i] for i in chunks[0]])]
            else:
                vectors = self._run_passes(encodings, chunks)
                # the heap onnxruntime freed between passes goes back once calls stop
                # (a query is one pass and frees little)
                HEAP_TRIM.request()
        out = np.empty((len(items), vectors[0].shape[1]), dtype=np.float32)
        for chunk, pooled in zip(chunks, vectors, strict=True):
            out[chunk] = pooled
        return out

    def _run_passes(self, encodings: list[Any], chunks: list[list[int]]) -> list[Any]:
        """The vectors of each chunk's forward pass, two passes at a time: the calling
        thread and the embedder's worker each take the next pass until none is left (the
        worker busy with another call, or in a forked child, the caller runs them all).
        Two single passes in flight keep both cores busy between the operators' parallel
        sections, where one pass on two intra-op threads leaves one waiting."""
        vectors: list[Any] = [None] * len(chunks)
        pending = deque(range(len(chunks)))

        def drain(_: object) -> None:
            while pending:
                try:
                    k = pending.popleft()
                except IndexError:  # the other thread took the last one
                    return
                try:
                    vectors[k] = self._run([encodings[i] for i in chunks[k]])
                except BaseException:
                    pending.clear()  # the other thread stops after its pass
                    raise

        self._passes.perform((0, 1), drain)
        return vectors

    def _run(self, encodings: list[Any]) -> Any:
        """Forward one batch of encodings; returns a (batch, dims) float32 array."""
        np = self._np
        feed = batch_feed(np, encodings, self._input_names)
        mask = feed["attention_mask"]
        hidden = self._session.run(None, feed)[0]
        if hidden.ndim != 3 or hidden.shape[0] != len(encodings):
            raise EmbeddingError(
                f"ONNX model returned shape {hidden.shape}, expected (batch, tokens, dims)",
                hint="Use an encoder whose first output is last_hidden_state.",
                details={"model": str(self.model_path)},
            )
        pooled = pool(np, hidden, mask, self.config.pooling)
        if self.config.normalize:
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = pooled / np.clip(norms, 1e-12, None)
        return pooled.astype(np.float32, copy=False)

    def close(self) -> None:
        """Release the onnxruntime session and stop the passes' worker thread; later
        ``embed`` calls raise ``EmbeddingError``."""
        self._session = None
        self._passes.close()


def batches(widths: Sequence[int], max_rows: int, max_tokens: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` runs of ``widths`` (token counts sorted ascending) for one forward
    pass each: at most ``max_rows`` texts and, past a pass's first text, at most
    ``max_tokens`` padded tokens (texts x the longest, the last)."""
    start = 0
    for stop in range(1, len(widths) + 1):
        rows = stop - start
        if stop == len(widths) or rows == max_rows or (rows + 1) * widths[stop] > max_tokens:
            yield start, stop
            start = stop


def pool(np: Any, hidden: Any, mask: Any, mode: str) -> Any:
    """sentence-transformers' pooling of token states ``hidden`` (batch, tokens, dims)."""
    weights = mask.astype(np.float32)[:, :, None]
    if mode == "cls":
        return hidden[:, 0, :]
    if mode == "max":
        return np.where(weights > 0, hidden, -1e9).max(axis=1)
    if mode == "lasttoken":
        last = np.clip(mask.sum(axis=1) - 1, 0, None)
        return hidden[np.arange(hidden.shape[0]), last, :]
    counts = np.clip(weights.sum(axis=1), 1e-9, None)
    summed = (hidden * weights).sum(axis=1)
    return summed / (np.sqrt(counts) if mode == "mean_sqrt_len" else counts)


def cache_dir(config: OnnxEmbedderConfig) -> Path | None:
    """Where the prepared model is kept (``None``: nowhere, ``model_cache`` is off)."""
    if not config.model_cache:
        return None
    if config.cache_dir is not None:
        return Path(config.cache_dir).expanduser()
    return default_cache_dir()


def resolve(config: OnnxEmbedderConfig) -> OnnxEmbedderConfig:
    """``config`` with what its ``model_dir`` says filled into the fields not set
    explicitly (without ``model_dir``, ``config`` itself)."""
    if config.model_dir is None:
        return config
    found = read_export(Path(config.model_dir), config.onnx_file)
    chosen = {
        "model_path": str(found.model),
        "tokenizer_path": str(found.tokenizer),
        "pooling": found.pooling,
        "normalize": found.normalize,
        "query_prompt": found.query_prompt,
        "document_prompt": found.document_prompt,
    }
    if found.max_length is not None:
        chosen["max_length"] = min(found.max_length, 8192)
    chosen = {k: v for k, v in chosen.items() if k not in config.model_fields_set}
    return config.model_copy(update=chosen)
