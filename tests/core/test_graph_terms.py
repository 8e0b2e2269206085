"""Graph names and the offline extractor."""

from __future__ import annotations

import time

from memoweave.graph.terms import (
    MAX_LINKED,
    entity_name,
    graph_entities,
    offline_triples,
    relationship_name,
)
from memoweave.memory.graph_writes import clean_triples


def test_names_are_normalised_like_the_entity_index() -> None:
    assert entity_name("  Caroline’s ") == "caroline"
    assert entity_name("New   York") == "new york"
    assert entity_name("") is None and entity_name(None) is None and entity_name(3) is None
    assert relationship_name("Lives in") == "lives_in"
    assert relationship_name("WORKS-AT / since") == "works_at_since"
    assert relationship_name("住在") == "住在"
    assert relationship_name("!!") is None


def test_graph_entities_drop_numbers_dates_and_name_parts() -> None:
    text = 'Caroline moved to New York on 8 May 2023 with 12 friends and read "Becoming".'
    assert graph_entities(text) == ["becoming", "caroline", "new york"]


def test_offline_triples_link_the_speaker_and_pairs() -> None:
    assert offline_triples("Melanie took me to Boston.", "Caroline") == [
        ("caroline", "mentions", "melanie"),
        ("caroline", "mentions", "boston"),
        ("melanie", "co_mentioned", "boston"),
    ]
    assert offline_triples("Caroline told Caroline.", "Caroline") == []
    assert offline_triples("nothing here at all") == []
    many = " ".join(f"Name{chr(65 + i)}x met." for i in range(20))
    triples = offline_triples(many)
    assert len(triples) == MAX_LINKED * (MAX_LINKED - 1) // 2


def test_offline_triples_are_linear_in_the_text() -> None:
    """100x the text within 400x the CPU time (process time: other jobs do not count)."""
    sentence = "Caroline met Melanie in Boston. "
    small, big = sentence * 300, sentence * 30_000

    def cpu(text: str) -> float:
        started = time.process_time()
        offline_triples(text)
        return time.process_time() - started

    small_s = min(cpu(small + str(i)) for i in range(3))
    assert cpu(big) < max(small_s, 1e-3) * 400


def test_llm_triples_are_cleaned() -> None:
    raw = [
        ("Alice", "Lives in", "Paris"),
        ("alice", "lives_in", "paris"),
        ("Alice", "is", "alice"),
        ("", "x", "y"),
        ("a", "b"),
    ]
    assert clean_triples(raw) == [("alice", "lives_in", "paris")]
