"""The entity signal: memories linked to the entities a query names score higher.

Query entities come from :func:`memoweave.index.entities.extract_entities`; links and
their IDF weights from :class:`memoweave.index.entity_index.EntityIndex`. The signal
re-scores the dense and keyword candidates (it adds none): a candidate's score is the
sum of the normalised IDF of the query entities it mentions, capped at 1, so a rare name
counts for much and a name on every memory (a speaker's) for little.
"""

from __future__ import annotations

from collections.abc import Sequence

from memoweave.index.contracts import ScopeKeys
from memoweave.index.entities import extract_entities
from memoweave.index.entity_index import EntityIndex


def entity_scores(
    index: EntityIndex | None,
    query: str,
    *,
    scope: ScopeKeys,
    memory_ids: Sequence[str],
    statuses: Sequence[str],
) -> dict[str, float]:
    """Entity score in (0, 1] of each of ``memory_ids`` that shares an entity with ``query``."""
    entities = extract_entities(query)
    if index is None or not entities or not memory_ids:
        return {}
    matches = index.match(entities, scope, memory_ids, statuses)
    return {i: s for i in memory_ids if (s := matches.score(i)) > 0}
