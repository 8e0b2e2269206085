"""Vector store mixins: similarity search (score contract, metrics, top_k, filtered top_k)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from memoweave.filters import parse_filter
from memoweave.providers.vector_store import TEXT_FIELD, Metric, VectorRecord, VectorStore
from memoweave.testing.filter_cases import kit_vector
from memoweave.testing.helpers import cosine, dot, neg_euclidean
from memoweave.testing.vs_base import StoreFactory, bound_store, ids_of, record, records

SCORE_TOLERANCE = 1e-3


def _check_scores(
    store: VectorStore,
    query: Sequence[float],
    vectors: dict[str, list[float]],
    exact: Callable[[Sequence[float], Sequence[float]], float],
    top_k: int,
) -> None:
    hits = store.search(query, top_k=top_k)
    expected = sorted(vectors, key=lambda i: exact(query, vectors[i]), reverse=True)[:top_k]
    assert len(hits) == min(top_k, len(vectors)), f"asked top_k={top_k}, got {len(hits)} hits"
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True), f"scores not descending: {scores}"
    for hit in hits:
        want = exact(query, vectors[hit.id])
        assert hit.score == pytest.approx(want, abs=SCORE_TOLERANCE * max(1.0, abs(want))), (
            f"hit {hit.id}: score {hit.score}, exact similarity {want}"
        )
    assert ids_of(hits) == expected


class SearchTests:
    """search ranks by the collection's metric and honours top_k."""

    def test_cosine_scores_are_exact_and_descending(self, vector_store: VectorStore) -> None:
        """Cosine scores equal the exact cosine similarity (±1e-3), best first, top_k kept.

        Troubleshooting: many engines return a *distance* (1 - cosine, or L2 on normalised
        vectors); convert it to the similarity the contract asks for. Sort descending and
        slice to ``top_k`` after any post-filtering.
        """
        batch = records("cos", 12, user_id="alice")
        vector_store.upsert(batch)
        vectors = {r.id: r.vector for r in batch}
        query = kit_vector("cos-query")
        _check_scores(vector_store, query, vectors, cosine, top_k=5)
        _check_scores(vector_store, [-x for x in query], vectors, cosine, top_k=3)

    def test_dot_metric_scores(self, store_factory: StoreFactory, collection_name: str) -> None:
        """A ``dot`` collection scores by the exact dot product (relative ±1e-3).

        Troubleshooting: map ``"dot"`` to the engine's inner-product metric and return the
        raw (not normalised) product; a negated distance must be negated back.
        """
        self_check_metric(store_factory, f"{collection_name}_dot", "dot", dot)

    def test_euclidean_metric_scores(
        self, store_factory: StoreFactory, collection_name: str
    ) -> None:
        """A ``euclidean`` collection scores by minus the L2 distance (<= 0).

        Troubleshooting: engines often report the *squared* L2 distance; return
        ``-sqrt(d2)``. The best hit has the score closest to 0.
        """
        self_check_metric(store_factory, f"{collection_name}_l2", "euclidean", neg_euclidean)

    def test_top_k_larger_than_collection(self, vector_store: VectorStore) -> None:
        """top_k above the record count returns every record once, with payloads.

        Troubleshooting: clamp the engine's limit if it rejects limits above the collection
        size, and de-duplicate hits coming from several segments.
        """
        batch = records("small", 3, user_id="alice")
        vector_store.upsert(batch)
        hits = vector_store.search(kit_vector("small-q"), top_k=50)
        assert sorted(ids_of(hits)) == sorted(r.id for r in batch)
        by_id = {r.id: r.payload for r in batch}
        assert all(hit.payload == by_id[hit.id] for hit in hits)

    def test_exact_match_ranks_first(self, vector_store: VectorStore) -> None:
        """Searching with a stored vector returns that record first with score ~1.

        Troubleshooting: if the score is ~0 the engine returns a distance; if another
        record ranks first the ranking order is inverted.
        """
        batch = records("exact", 8)
        vector_store.upsert(batch)
        [hit] = vector_store.search(batch[5].vector, top_k=1)
        assert hit.id == batch[5].id, "the identical vector is not the best hit"
        assert hit.score == pytest.approx(1.0, abs=SCORE_TOLERANCE), (
            f"score {hit.score} for an identical vector (a distance instead of a similarity?)"
        )

    def test_filtered_search_fills_top_k(self, vector_store: VectorStore) -> None:
        """A filter excluding the nearest records still yields top_k matching hits.

        Troubleshooting: filter *before* the top-k cut (engine pre-filtering) or, when you
        must post-filter, over-fetch until ``top_k`` matches are found or the collection is
        exhausted. Taking top_k first and filtering afterwards returns too few hits.
        """
        query = kit_vector("crowd-q")
        near = [
            record(f"crowd-{i}", {"user_id": "bob"}, [q + 0.001 * (i + 1) for q in query])
            for i in range(30)
        ]
        far = [record(f"far-{i}", {"user_id": "alice"}) for i in range(5)]
        vector_store.upsert(near + far)
        hits = vector_store.search(query, top_k=3, filter=parse_filter({"user_id": "alice"}))
        assert len(hits) == 3, f"{len(hits)} hits for top_k=3 although 5 records match the filter"
        assert {hit.payload["user_id"] for hit in hits} == {"alice"}
        far_vectors = {r.id: r.vector for r in far}
        expected = sorted(far_vectors, key=lambda i: cosine(query, far_vectors[i]), reverse=True)
        assert ids_of(hits) == expected[:3]


def self_check_metric(
    factory: StoreFactory,
    name: str,
    metric: Metric,
    exact: Callable[[Sequence[float], Sequence[float]], float],
) -> None:
    """Bind a new store to collection ``name`` with ``metric`` and check its scores."""
    store = bound_store(factory, name, metric)
    try:
        batch = [record(f"{metric}-{i}", {"i": i}, [x * (1 + i % 3) for x in kit_vector(i)])
                 for i in range(10)]  # fmt: skip
        store.upsert(batch)
        vectors = {r.id: r.vector for r in batch}
        _check_scores(store, kit_vector(f"{metric}-query"), vectors, exact, top_k=4)
    finally:
        store.close()


class KeywordSearchTests:
    """keyword_search, only when ``capabilities.keyword_search`` is claimed."""

    def _keyword_store(self, store: VectorStore) -> VectorStore:
        if not store.capabilities.keyword_search:
            pytest.skip("store does not claim capabilities.keyword_search")
        docs = {
            "kw-0": ("alice", "I love hiking in the Alps with my dog"),
            "kw-1": ("alice", "My favourite food is ramen"),
            "kw-2": ("bob", "Bob goes hiking every weekend"),
            "kw-3": ("alice", "Meeting notes about the quarterly budget"),
            "kw-4": ("bob", "東京 ラーメン tour"),
        }
        store.upsert([record(k, {"user_id": u, TEXT_FIELD: t}) for k, (u, t) in docs.items()])
        return store

    def test_keyword_search_finds_records_by_their_words(self, vector_store: VectorStore) -> None:
        """Records sharing a term with the query are found, ranked by relevance.

        Troubleshooting: index ``payload[TEXT_FIELD]`` (``"memory"``, the memory text) on
        upsert *and* update, tokenise case-insensitively, and return
        similarity-style scores (higher is better).
        """
        store = self._keyword_store(vector_store)
        hits = store.keyword_search("hiking", top_k=10)
        assert sorted(ids_of(hits)) == sorted([record("kw-0").id, record("kw-2").id])
        scores = [hit.score for hit in hits]
        assert scores == sorted(scores, reverse=True)
        assert ids_of(store.keyword_search("ramen budget", top_k=1)) in (
            [record("kw-1").id],
            [record("kw-3").id],
        )

    def test_keyword_search_without_shared_terms_is_empty(self, vector_store: VectorStore) -> None:
        """A query sharing no term with any record returns no hits.

        Troubleshooting: do not fall back to returning arbitrary records with score 0;
        return only documents matching at least one query term.
        """
        store = self._keyword_store(vector_store)
        assert store.keyword_search("xylophone zeppelin", top_k=5) == []

    def test_keyword_search_respects_filter(self, vector_store: VectorStore) -> None:
        """Keyword hits are restricted to records matching the filter.

        Troubleshooting: apply the filter inside the keyword query (or over-fetch and
        post-filter with the reference evaluator), exactly as for vector search.
        """
        store = self._keyword_store(vector_store)
        hits = store.keyword_search("hiking", top_k=10, filter=parse_filter({"user_id": "bob"}))
        assert ids_of(hits) == [record("kw-2").id]
        assert hits[0].payload["user_id"] == "bob"

    def test_keyword_search_follows_deletes_and_updates(self, vector_store: VectorStore) -> None:
        """A deleted record, or one whose text no longer holds the word, is not a keyword
        hit; a record updated or re-upserted to hold a word is found by it.

        Troubleshooting: a keyword index kept beside the vector index (an FTS table, a
        sparse vector, an engine text index) must be written by delete, update and
        re-upsert as well as by the first insert.
        """
        store = self._keyword_store(vector_store)
        store.delete([record("kw-2").id])
        store.update(record("kw-0").id, payload={"user_id": "alice", TEXT_FIELD: "A zeppelin ride"})
        again = record("kw-1")
        store.upsert(
            [
                VectorRecord(
                    again.id, again.vector, {"user_id": "alice", TEXT_FIELD: "Hiking zeppelin"}
                )
            ]
        )
        labels = {record(k).id: k for k in ("kw-0", "kw-1", "kw-2", "kw-3", "kw-4")}
        for word, expected in (("hiking", ["kw-1"]), ("zeppelin", ["kw-0", "kw-1"]), ("ramen", [])):
            found = sorted(labels[i] for i in ids_of(store.keyword_search(word, top_k=10)))
            assert found == expected, f"keyword search for {word!r} found {found}, not {expected}"
