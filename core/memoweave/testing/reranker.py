"""``RerankerConformance``: the standard suite every reranker plugin runs.

Subclass it and override the ``reranker`` fixture. Flags: ``semantic = True`` enables the
relevance check (real models); remote providers set ``remote = True`` and override
``provider_for_url(self, base_url)``.
"""

from __future__ import annotations

import pytest

from memoweave.errors import MemoweaveError, RerankerError
from memoweave.providers.reranker import RankedDocument, Reranker
from memoweave.testing.guard import StandardTests
from memoweave.testing.model_base import RemoteProviderSupport, check_http_500, check_unreachable

QUERY = "Where does the user live?"
DOCS = [
    "The user enjoys playing tennis on weekends.",
    "The user lives in Lisbon, Portugal.",
    "Photosynthesis converts light into chemical energy.",
    "The user's sister lives in Madrid.",
    "Bananas are rich in potassium.",
]


def _check_ranking(ranked: object, docs: list[str], top_k: int) -> list[RankedDocument]:
    assert isinstance(ranked, list), f"rerank returned {type(ranked).__name__}"
    assert 1 <= len(ranked) <= min(top_k, len(docs)), f"{len(ranked)} results for top_k={top_k}"
    assert all(isinstance(r, RankedDocument) for r in ranked)
    indexes = [r.index for r in ranked]
    assert len(set(indexes)) == len(indexes), f"duplicate indexes {indexes}"
    for r in ranked:
        assert 0 <= r.index < len(docs), f"index {r.index} out of range"
        assert r.text == docs[r.index], f"text of index {r.index} is not the input document"
        assert isinstance(r.score, float), f"score {r.score!r} is not a float"
    scores = [r.score for r in ranked]
    assert scores == sorted(scores, reverse=True), f"scores not descending: {scores}"
    return ranked


def _rerank_one(reranker: Reranker) -> object:
    return reranker.rerank("q", ["a", "b"], 1)


class RerankerConformance(RemoteProviderSupport, StandardTests):
    """Every standard reranker test; override the ``reranker`` fixture."""

    _kit_suite = True
    semantic: bool = False

    @pytest.fixture
    def reranker(self) -> Reranker:
        """Override me: yield a Reranker built through the registry."""
        pytest.fail("Override the `reranker` fixture in your RerankerConformance subclass.")

    def test_returns_top_k_sorted_with_input_indexes(self, reranker: Reranker) -> None:
        """At most top_k results, best first, each index/text pointing at its input.

        Troubleshooting: sort by score descending *before* slicing to ``top_k``; keep the
        original position as ``index`` (not the rank); return Python floats.
        """
        _check_ranking(reranker.rerank(QUERY, DOCS, 3), DOCS, 3)

    def test_top_k_above_document_count(self, reranker: Reranker) -> None:
        """top_k larger than the number of documents returns each document at most once.

        Troubleshooting: clamp ``top_k`` to ``len(documents)``.
        """
        _check_ranking(reranker.rerank(QUERY, DOCS[:2], 10), DOCS[:2], 10)

    def test_empty_documents_return_empty_list(self, reranker: Reranker) -> None:
        """rerank(q, [], k) returns [] without calling the model.

        Troubleshooting: return early; models and servers often fail on an empty batch.
        """
        assert reranker.rerank(QUERY, [], 5) == []

    def test_unicode_documents(self, reranker: Reranker) -> None:
        """CJK, emoji and accented documents are ranked and mapped back correctly.

        Troubleshooting: do not normalise or re-encode the texts you return; return the
        input document itself as ``text``.
        """
        docs = ["東京に住んでいます", "emoji 🎉 party", "Straße in München", ""]
        _check_ranking(reranker.rerank("どこに住んでいますか", docs, 4), docs, 4)

    def test_repeated_documents_keep_their_positions(self, reranker: Reranker) -> None:
        """Documents given twice come back once per position: every index once, each
        pointing at its own input, and (with ``semantic = True``) both copies of the
        answer ahead of an unrelated document.

        Troubleshooting: keep each document's position through batching and sorting;
        mapping results back by text (``documents.index(text)``) or by a dict keyed on the
        text gives both copies the first one's index and loses the second.
        """
        docs = [DOCS[1], DOCS[0], DOCS[1], DOCS[4], DOCS[0]]
        ranked = _check_ranking(reranker.rerank(QUERY, docs, len(docs)), docs, len(docs))
        assert sorted(r.index for r in ranked) == list(range(len(docs))), (
            f"indexes {[r.index for r in ranked]} for {len(docs)} documents, two of them repeated"
        )
        if self.semantic:
            position = [r.index for r in ranked]
            assert max(position.index(0), position.index(2)) < position.index(3), (
                "a copy of the answer ranks below the unrelated document"
            )

    def test_relevant_document_ranks_first(self, reranker: Reranker) -> None:
        """With ``semantic = True``: the answering document outranks unrelated ones.

        Troubleshooting: check the (query, document) pair order your model expects and
        that higher scores mean more relevant (negate distances).
        """
        if not self.semantic:
            pytest.skip("semantic = False for this reranker")
        ranked = _check_ranking(reranker.rerank(QUERY, DOCS, 5), DOCS, 5)
        position = [r.index for r in ranked]
        assert position.index(1) < position.index(2)
        assert position.index(1) < position.index(4)

    def test_probability_scores_are_in_the_unit_interval(self, reranker: Reranker) -> None:
        """A reranker with ``scores_are_probabilities`` scores every document in [0, 1]
        (search fuses such scores as probabilities; skipped for a scale of its own).

        Troubleshooting: apply the sigmoid to the model's logit, or return ``False`` from
        ``scores_are_probabilities``.
        """
        claims = reranker.scores_are_probabilities
        assert isinstance(claims, bool), f"scores_are_probabilities is {claims!r}, not a bool"
        if not claims:
            pytest.skip("this reranker's scores are on a scale of its own")
        docs = [*DOCS, "東京に住んでいます", ""]
        for r in _check_ranking(reranker.rerank(QUERY, docs, len(docs)), docs, len(docs)):
            assert 0.0 <= r.score <= 1.0, f"score {r.score} of document {r.index} is not in [0, 1]"

    def test_similarity_scores_are_in_the_unit_interval(self, reranker: Reranker) -> None:
        """A reranker with ``scores_are_similarities`` scores every document in [0, 1] and
        does not also claim ``scores_are_probabilities`` (search weighs such a score like a
        cosine in its first pass; skipped for the other rerankers).

        Troubleshooting: rescale the model's similarity into [0, 1] and clip it (a MaxSim of
        normalised token vectors: subtract its floor, divide by one minus the floor), and
        claim one of the two kinds at most.
        """
        claims = reranker.scores_are_similarities
        assert isinstance(claims, bool), f"scores_are_similarities is {claims!r}, not a bool"
        if not claims:
            pytest.skip("this reranker's scores are not similarities")
        assert not reranker.scores_are_probabilities, "claims probabilities and similarities"
        docs = [*DOCS, "東京に住んでいます", ""]
        for r in _check_ranking(reranker.rerank(QUERY, docs, len(docs)), docs, len(docs)):
            assert 0.0 <= r.score <= 1.0, f"score {r.score} of document {r.index} is not in [0, 1]"

    def test_score_pairs_match_rerank(self, reranker: Reranker) -> None:
        """``score_pairs`` gives each (query, document) pair, in input order, the score
        ``rerank(query, [document], 1)`` gives it, and ``[]`` for no pairs; anything but a
        list of pairs of strings raises a MemoweaveError. Scores may differ by what a batch
        changes (a quantised model's activations are scaled per batch): up to 5 % of the
        spread of the pairs' scores.

        Troubleshooting: keep each pair's position through batching and sorting, and score
        each document against its own pair's query, not the first pair's; or do not
        override ``score_pairs`` (the contract's default asks ``rerank`` per pair).
        """
        fruit = "Which fruit is rich in potassium?"
        pairs = [(QUERY, DOCS[1]), (fruit, DOCS[4]), (QUERY, DOCS[2]), (fruit, DOCS[1]),
                 (QUERY, DOCS[1])]  # fmt: skip
        scores = reranker.score_pairs(pairs)
        assert isinstance(scores, list), f"score_pairs returned {type(scores).__name__}"
        assert len(scores) == len(pairs), f"{len(scores)} scores for {len(pairs)} pairs"
        wanted = [reranker.rerank(query, [document], 1)[0].score for query, document in pairs]
        slack = 0.05 * (max(wanted) - min(wanted)) or 1e-6 * max(1.0, abs(wanted[0]))
        for position, (got, want) in enumerate(zip(scores, wanted, strict=True)):
            assert isinstance(got, float), f"score {got!r} of pair {position} is not a float"
            assert abs(got - want) <= slack, (
                f"pair {position} {pairs[position]!r} scores {got} in score_pairs "
                f"but {want} in rerank"
            )
        assert reranker.score_pairs([]) == []
        for bad in ("not pairs", [("only a query",)], [(QUERY, 3)]):
            with pytest.raises(MemoweaveError):
                reranker.score_pairs(bad)  # type: ignore[arg-type]

    def test_invalid_top_k_is_rejected(self, reranker: Reranker) -> None:
        """top_k < 1 raises a MemoweaveError.

        Troubleshooting: validate arguments first and raise ``ValidationError``.
        """
        with pytest.raises(MemoweaveError):
            reranker.rerank(QUERY, DOCS, 0)

    def test_unreachable_server_raises_reranker_error(self) -> None:
        """A closed 127.0.0.1 port raises RerankerError (remote providers).

        Troubleshooting: wrap connection and timeout exceptions in ``RerankerError``.
        """
        check_unreachable(self, _rerank_one, RerankerError)

    def test_http_500_raises_reranker_error_with_message(self) -> None:
        """A server answering 500 raises RerankerError carrying the server's message.

        Troubleshooting: include the response body's error text in the ``RerankerError``.
        """
        check_http_500(self, _rerank_one, RerankerError)


__all__ = ["RerankerConformance"]
