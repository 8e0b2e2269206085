"""``EmbedderConformance``: the standard suite every embedder plugin runs.

Subclass it and override the ``embedder`` fixture (any scope). Flags: ``semantic = True``
enables the similarity sanity check (real models; leave False for hashing embedders);
remote providers set ``remote = True`` and override ``provider_for_url(self, base_url)``.
"""

from __future__ import annotations

import math

import pytest

from memoweave.errors import EmbeddingError, MemoweaveError
from memoweave.providers.embedder import Embedder
from memoweave.testing.guard import StandardTests
from memoweave.testing.helpers import cosine
from memoweave.testing.model_base import RemoteProviderSupport, check_http_500, check_unreachable

TEXTS = ["The cat sleeps on the sofa.", "Stock markets fell sharply today.", "I like green tea."]
UNICODE_TEXTS = ["", "日本語のテキストです", "emoji 🎉🧠👩‍👩‍👧", "Ünïcödé Straße", "مرحبا بالعالم"]
_ADJECTIVES = "red quiet early salty frozen noisy gentle rusty bright hollow ancient sticky".split()
_NOUNS = "violin harbour tomato glacier lantern bicycle orchard kettle comet meadow ladder".split()
#: 130 distinct texts of varied length: past the batch sizes engines and clients split at
#: (32, 64, 100, 128), with a duplicate far from its first occurrence.
LARGE_BATCH = [
    f"The {_ADJECTIVES[i % 12]} {_NOUNS[i % 11]} number {i}" + " again" * (i % 5)
    for i in range(130)
]
LARGE_BATCH[101] = LARGE_BATCH[3]
#: The positions compared with single embeddings: both sides of every common split.
_SPLIT_SIDES = (0, 1, 3, 31, 32, 33, 63, 64, 65, 99, 100, 101, 127, 128, 129)


def _check_vectors(vectors: object, n: int, dims: int | None) -> list[list[float]]:
    assert isinstance(vectors, list), f"embed returned {type(vectors).__name__}, not list"
    assert len(vectors) == n, f"{n} texts gave {len(vectors)} vectors"
    for vec in vectors:
        assert isinstance(vec, list), f"a vector is {type(vec).__name__}; return plain lists"
        assert all(type(x) is float for x in vec), "vector items must be Python floats"
        assert all(math.isfinite(x) for x in vec), "vector has NaN or inf"
        if dims is not None:
            assert len(vec) == dims, f"vector has {len(vec)} dims, embedder.dims = {dims}"
    return vectors


def _embed_one(embedder: Embedder) -> object:
    return embedder.embed(["hello"])


class EmbedderConformance(RemoteProviderSupport, StandardTests):
    """Every standard embedder test; override the ``embedder`` fixture."""

    _kit_suite = True
    semantic: bool = False

    @pytest.fixture
    def embedder(self) -> Embedder:
        """Override me: yield an Embedder built through the registry."""
        pytest.fail("Override the `embedder` fixture in your EmbedderConformance subclass.")

    def test_dims_match_vectors(self, embedder: Embedder) -> None:
        """``dims`` (None or int before the first call) equals every vector's length after.

        Troubleshooting: set ``dims`` from configuration or from the first response; return
        ``vec.tolist()`` (Python floats), not numpy arrays or float32 scalars.
        """
        before = embedder.dims
        assert before is None or (isinstance(before, int) and before > 0)
        vectors = _check_vectors(embedder.embed(TEXTS), len(TEXTS), None)
        dims = embedder.dims
        assert isinstance(dims, int) and dims > 0, f"dims after a call = {dims!r}"
        assert before in (None, dims)
        _check_vectors(vectors, len(TEXTS), dims)

    def test_batch_keeps_input_order(self, embedder: Embedder) -> None:
        """embed([a, b, c]) matches embed([a]), embed([b]), embed([c]) (cosine > 0.999).

        Troubleshooting: servers may answer batch items out of order (OpenAI returns an
        ``index`` per item): sort by it. Padding in batches may change vectors slightly,
        never their order.
        """
        batch = embedder.embed(TEXTS)
        for text, vec in zip(TEXTS, batch, strict=True):
            [single] = embedder.embed([text])
            assert cosine(vec, single) > 0.999, f"batch vector for {text!r} differs from single"

    def test_large_batch_keeps_order_across_splits(self, embedder: Embedder) -> None:
        """embed() of 130 texts gives 130 vectors, each matching the text's single
        embedding on both sides of the usual split sizes (32, 64, 100, 128), and a repeated
        text gets its first occurrence's vector.

        Troubleshooting: when a batch is split into requests or forward passes (by count,
        by a token budget, by length buckets), put every part's vectors back at their
        texts' positions: an off-by-one slice, a reordered bucket or a deduplication that
        maps repeated texts back wrongly shows up only past the first split.
        """
        batch = _check_vectors(embedder.embed(LARGE_BATCH), len(LARGE_BATCH), None)
        for i in _SPLIT_SIDES:
            [single] = embedder.embed([LARGE_BATCH[i]])
            assert cosine(batch[i], single) > 0.999, (
                f"the vector at position {i} of a {len(LARGE_BATCH)}-text batch is not that "
                "text's own"
            )
        assert cosine(batch[3], batch[101]) > 0.999, "a repeated text got another vector"

    def test_empty_input_returns_empty_list(self, embedder: Embedder) -> None:
        """embed([]) returns [] (without any I/O).

        Troubleshooting: return early before calling the model or server; many servers
        reject an empty batch.
        """
        assert embedder.embed([]) == []

    def test_unicode_and_empty_strings(self, embedder: Embedder) -> None:
        """CJK, emoji, RTL and the empty string each get a finite vector.

        Troubleshooting: do not drop empty strings from the batch (that shifts every later
        vector); send them as is, or substitute a placeholder and keep the position.
        """
        _check_vectors(embedder.embed(UNICODE_TEXTS), len(UNICODE_TEXTS), embedder.dims)

    def test_query_and_document_purposes(self, embedder: Embedder) -> None:
        """purpose="query" and purpose="document" both work and give the same dims.

        Troubleshooting: add the model's query/document prefixes (or ignore ``purpose``
        for symmetric models); never change the vector size by purpose.
        """
        [doc] = _check_vectors(embedder.embed(["tea"], purpose="document"), 1, None)
        [query] = _check_vectors(embedder.embed(["tea"], purpose="query"), 1, None)
        assert len(doc) == len(query) == embedder.dims

    def test_deterministic(self, embedder: Embedder) -> None:
        """The same text embeds to (nearly) the same vector twice.

        Troubleshooting: disable dropout/sampling (``model.eval()``) and avoid random
        projection seeds that change per call.
        """
        [a] = embedder.embed([TEXTS[0]])
        [b] = embedder.embed([TEXTS[0]])
        assert cosine(a, b) > 0.9999

    def test_distinct_texts_get_distinct_vectors(self, embedder: Embedder) -> None:
        """Unrelated texts do not collapse onto the same vector.

        Troubleshooting: a constant vector usually means the text never reached the model
        (wrong field name in the request) or a pooling bug.
        """
        a, b, _ = embedder.embed(TEXTS)
        assert cosine(a, b) < 0.9999

    def test_semantic_similarity(self, embedder: Embedder) -> None:
        """With ``semantic = True``: a related sentence is closer than an unrelated one.

        Troubleshooting: check the pooling (mean vs CLS) and normalisation the model card
        prescribes, and that query/document prefixes are not swapped.
        """
        if not self.semantic:
            pytest.skip("semantic = False for this embedder")
        anchor, related, unrelated = embedder.embed(
            ["A cat is sleeping on the couch.", "The kitten naps on the sofa.",
             "Quarterly tax filings are due in April."]
        )  # fmt: skip
        assert cosine(anchor, related) > cosine(anchor, unrelated)

    def test_bare_string_is_rejected(self, embedder: Embedder) -> None:
        """embed("text") (a str instead of a list) raises a MemoweaveError.

        Troubleshooting: a ``str`` is a sequence of characters; validate that ``texts`` is a
        list/tuple of strings and raise ``ValidationError`` or ``EmbeddingError``.
        """
        with pytest.raises(MemoweaveError):
            embedder.embed("hello")

    def test_unreachable_server_raises_embedding_error(self) -> None:
        """A closed 127.0.0.1 port raises EmbeddingError (remote providers).

        Troubleshooting: wrap the client's connection and timeout exceptions in
        ``EmbeddingError``; keep retries low.
        """
        check_unreachable(self, _embed_one, EmbeddingError)

    def test_http_500_raises_embedding_error_with_message(self) -> None:
        """A server answering 500 raises EmbeddingError carrying the server's message.

        Troubleshooting: put the response body's ``error``/``message`` text into the
        ``EmbeddingError`` message or details instead of a bare status code.
        """
        check_http_500(self, _embed_one, EmbeddingError)


__all__ = ["EmbedderConformance"]
