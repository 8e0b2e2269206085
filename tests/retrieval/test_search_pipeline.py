"""The search pipeline end to end: keyword-only hits, explain, threshold, CJK, the entity
and time signals, and the configuration knobs."""

from __future__ import annotations

import pytest

from memoweave.errors import ValidationError

from .conftest import BuildMemory, add_texts

FILLER = [
    "Bob enjoys hiking in the mountains on weekends",
    "Bob drinks green tea every morning",
    "Bob works as a nurse at the city hospital",
    "Bob's sister plays the violin in an orchestra",
    "Bob is learning to bake sourdough bread",
    "Bob collects vintage postcards from Europe",
]


def test_a_memory_found_only_by_its_words_is_returned(build_memory: BuildMemory) -> None:
    # one candidate per signal: dense brings a hiking memory, keywords the axolotl one,
    # whose dense score then comes from its stored vector
    memory = build_memory(retrieval={"candidates": 1, "keyword_weight": 10.0})
    more = [f"Bob enjoys hiking in the hills number {i}" for i in range(8)]
    ids = add_texts(memory, [*FILLER, *more, "Bob owns a rare axolotl named Pixel"])
    hits = memory.search("hiking hiking axolotl", user_id="alice", top_k=1, explain=True)
    (hit,) = hits["results"]
    assert hit["id"] == ids[-1]
    assert hit["explain"]["keyword"]["rank"] == 1
    assert hit["explain"]["dense"]["rank"] == 2  # not the dense top 1: keywords brought it


def test_keyword_scores_use_only_the_searched_scopes_statistics(
    build_memory: BuildMemory,
) -> None:
    memory = build_memory()
    add_texts(memory, ["Alice flew to Paris for work", "Alice drinks tea in Lyon"])

    def keyword_scores() -> dict[str, float]:
        hits = memory.search("Paris tea", user_id="alice", explain=True)["results"]
        return {h["id"]: h["explain"]["keyword"]["score"] for h in hits}

    before = keyword_scores()
    add_texts(memory, [f"Bob loves Paris, day {i}" for i in range(6)], user_id="bob")
    assert keyword_scores() == before
    assert len(before) == 2


@pytest.mark.parametrize("fusion", ["calibrated", "rrf"])
def test_explain_contributions_add_up_to_the_score(build_memory: BuildMemory, fusion: str) -> None:
    memory = build_memory(retrieval={"fusion": fusion})
    add_texts(memory, [*FILLER, "Caroline visited Paris with Bob in May"])
    hits = memory.search("Bob in Paris", user_id="alice", explain=True)["results"]
    assert hits and hits[0]["score"] > 0
    for hit in hits:
        explain = hit["explain"]
        assert sum(v["contribution"] for v in explain.values()) == pytest.approx(hit["score"])
        assert 0.0 <= hit["score"] <= 1.0 + 1e-9
        assert set(explain) <= {"dense", "keyword", "entity"}
        for signal in explain.values():
            assert signal["rank"] >= 1 and signal["contribution"] >= 0
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert "explain" not in memory.search("Paris", user_id="alice")["results"][0]


def test_threshold_applies_to_the_fused_score(build_memory: BuildMemory) -> None:
    memory = build_memory()
    add_texts(memory, [*FILLER, "Bob plays chess with his grandfather"])
    everything = memory.search("Bob chess grandfather", user_id="alice")["results"]
    cut = everything[len(everything) // 2]["score"]
    kept = memory.search("Bob chess grandfather", user_id="alice", threshold=cut)["results"]
    assert kept and all(h["score"] >= cut for h in kept)
    assert [h["id"] for h in kept] == [h["id"] for h in everything if h["score"] >= cut]
    assert memory.search("Bob chess", user_id="alice", threshold=1.01)["results"] == []
    with pytest.raises(ValidationError):
        memory.search("Bob", user_id="alice", threshold="high")


def test_chinese_and_japanese_queries_find_their_memories(build_memory: BuildMemory) -> None:
    memory = build_memory()
    zh, ja, _ = add_texts(
        memory, ["我喜欢在北京吃烤鸭", "東京で寿司を食べました", "I like dumplings in Shanghai"]
    )
    hit = memory.search("北京烤鸭", user_id="alice", explain=True)["results"][0]
    assert hit["id"] == zh and "keyword" in hit["explain"]
    assert memory.search("寿司", user_id="alice")["results"][0]["id"] == ja


def test_rare_entities_boost_their_memories(build_memory: BuildMemory) -> None:
    memory = build_memory(retrieval={"dense_weight": 0.0, "keyword_weight": 1.0})
    ids = add_texts(
        memory,
        [
            "Bob read a book about gardening",
            "Bob read a book by Murakami about gardening",
            "Bob read a book about cooking",
        ],
    )
    hits = memory.search("Murakami gardening book", user_id="alice", explain=True)["results"]
    assert hits[0]["id"] == ids[1]
    assert hits[0]["explain"]["entity"]["score"] > 0
    assert "entity" not in {h["id"]: h for h in hits}[ids[0]]["explain"]


def test_a_named_date_favours_memories_observed_then(build_memory: BuildMemory) -> None:
    # equally good texts (the hashing test embedder's dense scores would only add noise):
    # the named date decides
    memory = build_memory(retrieval={"dense_weight": 0.0})
    may = add_texts(memory, ["Bob went to the lake"], observed_at="2023-05-03T10:00:00+00:00")
    june = add_texts(memory, ["Bob went to the beach"], observed_at="2023-06-20T10:00:00+00:00")
    on_may = memory.search("Where did Bob go on May 3, 2023?", user_id="alice", explain=True)
    assert on_may["results"][0]["id"] == may[0]
    assert on_may["results"][0]["explain"]["time"]["score"] == 1.0
    in_june = memory.search("Where did Bob go in June 2023?", user_id="alice")["results"]
    assert in_june[0]["id"] == june[0]
    plain = memory.search("Where did Bob go?", user_id="alice", explain=True)["results"]
    assert all("time" not in h["explain"] for h in plain)


def test_recency_weight_favours_recent_memories(build_memory: BuildMemory) -> None:
    memory = build_memory(retrieval={"recency_weight": 2.0, "recency_half_life_days": 7})
    old = add_texts(memory, ["Bob likes tea"], observed_at="2020-01-01T00:00:00+00:00")
    new = add_texts(memory, ["Bob likes tea a lot"])
    hits = memory.search("Bob likes tea", user_id="alice", explain=True)["results"]
    assert hits[0]["id"] == new[0]
    assert (
        hits[0]["explain"]["recency"]["score"]
        > {h["id"]: h for h in hits}[old[0]]["explain"]["recency"]["score"]
    )


def test_store_keyword_source_uses_the_stores_native_search(build_memory: BuildMemory) -> None:
    memory = build_memory(retrieval={"keyword_source": "store", "candidates": 1})
    ids = add_texts(memory, [*FILLER, "Bob owns a rare axolotl named Pixel"])
    assert memory._providers.indexes.keyword is None
    hits = memory.search("axolotl", user_id="alice", explain=True)["results"]
    assert hits[0]["id"] == ids[-1] and "keyword" in hits[0]["explain"]


def test_store_keyword_source_needs_a_store_that_has_it(build_memory: BuildMemory) -> None:
    from memoweave.stores.memory import InMemoryVectorStore

    class PlainStore(InMemoryVectorStore):
        def __init__(self) -> None:
            super().__init__()
            self.capabilities = type(self.capabilities)(keyword_search=False)

    with pytest.raises(ValidationError, match="keyword_source"):
        build_memory(retrieval={"keyword_source": "store"}, vector_store=PlainStore())
    auto = build_memory(retrieval={"keyword_source": "auto"}, vector_store=PlainStore())
    assert auto._providers.indexes.keyword is not None


@pytest.mark.parametrize(
    "retrieval", [{"fusion": "max"}, {"keyword_source": "web"}, {"dense_weight": -1}]
)
def test_bad_retrieval_config_is_rejected(build_memory: BuildMemory, retrieval: dict) -> None:
    from memoweave.errors import MemoweaveError

    with pytest.raises(MemoweaveError):
        build_memory(retrieval=retrieval)


def test_scores_do_not_depend_on_the_candidate_pool(build_memory: BuildMemory) -> None:
    narrow = build_memory(retrieval={"candidates": 2})
    wide = build_memory(retrieval={"candidates": 200})
    texts = [*FILLER, "Bob plays chess with his grandfather", "Alice plays the cello"]
    for memory in (narrow, wide):
        add_texts(memory, texts)
    query = "who plays chess with Bob?"
    few = narrow.search(query, user_id="alice", top_k=2)["results"]
    many = {h["memory"]: h["score"] for h in wide.search(query, user_id="alice")["results"]}
    assert len(many) == len(texts)
    for hit in few:
        assert hit["score"] == pytest.approx(many[hit["memory"]])


def test_turns_and_facts_are_told_apart_and_weighed_differently(
    build_memory: BuildMemory,
) -> None:
    # the same text as a fact of one user and a chat turn of another: same signals
    memory = build_memory()
    text = "Bob adopted a greyhound called Comet"
    [fact] = add_texts(memory, [text], user_id="alice")
    message = {"role": "user", "content": text, "name": "Bob"}
    turn = memory.add([message], user_id="carol", infer=False)["results"][0]["id"]
    extracted = memory.add("I adopted a greyhound called Comet.", user_id="dave")
    assert memory.get(fact)["memory_kind"] == "fact"
    assert memory.get(turn)["memory_kind"] == "turn"
    assert [memory.get(r["id"])["memory_kind"] for r in extracted["results"]] == ["fact"]
    as_fact, as_turn = (
        memory.search("greyhound", user_id=user, explain=True)["results"][0]
        for user in ("alice", "carol")
    )
    for name in ("dense", "keyword"):
        assert as_fact["explain"][name]["value"] == pytest.approx(as_turn["explain"][name]["value"])
    assert as_fact["score"] != pytest.approx(as_turn["score"])


def test_vectors_that_cannot_be_compared_give_no_dense_score() -> None:
    # a store that embeds text itself gets the query as text (an empty vector): memories
    # only the keyword signal found then have no dense score instead of a crash
    from memoweave.retrieval.dense import query_cosines

    assert query_cosines([], {"a": [0.1, 0.2]}) == {"a": None}
    assert query_cosines([1.0], {"a": [0.5, 0.5]}) == {"a": None}
    orthogonal = query_cosines([1.0, 0.0], {"a": [0.0, 1.0]})["a"]
    assert orthogonal is not None and abs(orthogonal) < 1e-15
    assert query_cosines([0.0, 0.0], {"a": [1.0, 1.0]}) == {"a": 0.0}


def test_a_turn_next_to_the_turn_a_query_matches_gets_the_neighbour_signal(
    build_memory: BuildMemory,
) -> None:
    # the question shares its words with Alice's turn; the answer is Bob's reply
    memory = build_memory()
    reply_text = "Yes, on Friday with Mel, it was great."
    chat = [
        {"role": "user", "name": "Alice", "content": "Did you go to the jazz concert downtown?"},
        {"role": "user", "name": "Bob", "content": reply_text},
        *[{"role": "user", "name": "Bob", "content": text} for text in FILLER],
    ]
    memory.add(chat, user_id="alice", infer=False)
    add_texts(memory, [reply_text], user_id="carol")
    query = "When did Bob go to the jazz concert downtown?"
    hits = {h["memory"]: h for h in memory.search(query, user_id="alice", explain=True)["results"]}
    reply = hits[reply_text]
    neighbour = reply["explain"]["neighbour"]
    assert 0.0 < neighbour["value"] == neighbour["score"] <= 1.0
    assert neighbour["contribution"] > 0
    shares = sum(s["contribution"] for s in reply["explain"].values())
    assert shares == pytest.approx(reply["score"])
    assert "turn_position" not in memory.get(reply["id"])["metadata"]
    fact = memory.search(query, user_id="carol", explain=True)["results"][0]
    assert fact["memory"] == reply_text and "neighbour" not in fact["explain"]


def test_neighbours_are_the_nearby_turns_of_the_same_add_call() -> None:
    from memoweave.retrieval.candidates import Candidate
    from memoweave.retrieval.neighbours import TURN_POSITION_KEY, neighbour_scores

    def turn(memory_id: str, score: float, position: object) -> Candidate:
        return Candidate(memory_id, {TURN_POSITION_KEY: position}, score=score)

    cands = [
        turn("a0", 0.9, ["a", 0]),
        turn("a2", 0.2, ["a", 2]),
        turn("a3", 0.1, ["a", 3]),
        turn("a5", 0.4, ["a", 5]),  # three positions from a2: not its neighbour
        turn("b1", 0.7, ["b", 1]),  # another add call
        turn("x", 0.8, ["a", True]),  # malformed positions are ignored
        Candidate("fact", {}, score=0.95),
    ]
    near = neighbour_scores({c.id: c for c in cands})
    assert near == {"a0": 0.2, "a2": 0.9, "a3": 0.4, "a5": 0.1}


def test_fact_neighbours_are_the_facts_observed_at_the_same_moment() -> None:
    from memoweave.retrieval.candidates import Candidate
    from memoweave.retrieval.neighbours import FACT_GROUP_MAX, neighbour_scores

    def fact(memory_id: str, score: float, observed: object, kind: str = "fact") -> Candidate:
        payload = {"observed_ts": observed, "memory_kind": kind}
        return Candidate(memory_id, payload, score=score)

    cands = [
        fact("s1a", 0.6, 100.0),
        fact("s1b", 0.3, 100.0),
        fact("s1c", 0.1, 100),  # an int timestamp: the same moment
        fact("s2", 0.9, 200.0),  # alone at its moment: no neighbour
        fact("t", 0.8, 100.0, kind="turn"),  # turns are grouped by position only
        fact("bad", 0.7, "100"),  # not a timestamp
        fact("flag", 0.7, True),
        Candidate("none", {}, score=0.5),
    ]
    near = neighbour_scores({c.id: c for c in cands})
    assert near == {"s1a": 0.3, "s1b": 0.6, "s1c": 0.6}
    bulk = [fact(f"b{i}", i / 100, 300.0) for i in range(FACT_GROUP_MAX + 1)]
    assert neighbour_scores({c.id: c for c in bulk}) == {}  # a bulk import: no signal
    assert len(neighbour_scores({c.id: c for c in bulk[:FACT_GROUP_MAX]})) == FACT_GROUP_MAX


def test_facts_of_one_conversation_lift_each_other(build_memory: BuildMemory) -> None:
    query, mate = "Did Alice adopt a cat?", "The cat is called Smoke"
    scores = {}
    for apart in (False, True):
        memory = build_memory()
        session = "2024-05-08T13:56:00+00:00"
        add_texts(memory, ["Alice adopted a grey cat"], observed_at=session)
        add_texts(memory, [mate], observed_at="2024-05-09T10:00:00+00:00" if apart else session)
        add_texts(memory, FILLER, observed_at="2024-06-01T09:00:00+00:00")
        hits = memory.search(query, user_id="alice", explain=True)["results"]
        hit = next(h for h in hits if h["memory"] == mate)
        scores[apart] = hit["score"]
        if apart:
            assert "neighbour" not in hit["explain"]
        else:
            signal = hit["explain"]["neighbour"]
            assert 0.0 < signal["value"] == signal["score"] <= 1.0 and signal["contribution"] > 0
            shares = sum(s["contribution"] for s in hit["explain"].values())
            assert shares == pytest.approx(hit["score"])
    assert scores[False] > scores[True]
