"""Relations in the additive answer: asked for, in the same single LLM call, only when a
graph store is configured.

The prompt gains one paragraph (``prompts/additive_graph_v1.txt``, about 85 tokens) and
every extracted memory one ``relations`` list of ``{"source", "relation", "target"}``.
What comes back is normalised by the write path
(:func:`memoweave.memory.graph_writes.clean_triples`); a memory whose ``relations`` is
empty gets none (the model said it links nothing); one whose answer has no ``relations``
key at all (a model ignoring the instruction) falls back to the offline links.
"""

from __future__ import annotations

from collections.abc import Sequence

from memoweave.memory.schemas import ExtractedRelation

GRAPH_PROMPT = "additive_graph_v1"
MAX_RELATION_CHARS = 200


def relation_triples(relations: Sequence[ExtractedRelation]) -> tuple[tuple[str, str, str], ...]:
    """The raw triples of an answer's relations, overlong parts dropped."""
    return tuple(
        (r.source, r.relation, r.target)
        for r in relations
        if max(len(r.source), len(r.relation), len(r.target)) <= MAX_RELATION_CHARS
    )
