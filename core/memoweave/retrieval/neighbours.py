"""The neighbour signal: a chat turn is more likely what a query is about when the turns
said just before or after it are.

A question often shares its words with one turn and has its answer in the reply ("Did
you go to the concert?" / "Yes, on Friday with Mel"). Turns stored by one ``add`` call
(``add(messages, infer=False)``) carry their position in that call under
:data:`TURN_POSITION_KEY` (``[batch, index]``); the signal of a turn is the highest
first-pass fused score among the candidates of the same batch at most
:data:`NEIGHBOUR_SPAN` positions away, so it is in [0, 1]. Neighbours are read among the
candidates only (the dense and keyword top ``candidates``): a neighbour outside them adds
nothing. Facts have no position and no neighbour signal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memoweave.retrieval.candidates import Candidate

TURN_POSITION_KEY = "turn_position"
"""Payload key of a turn's ``[batch, index]``: the ``add`` call that stored it (a random
hex id) and its position among that call's stored messages."""
NEIGHBOUR_SPAN = 2
"""How many positions away a neighbour may be (chosen on LoCoMo conv 26/30/41)."""


def position_of(payload: Mapping[str, Any]) -> tuple[str, int] | None:
    """A turn's ``(batch, index)``, or ``None`` (facts, turns written before positions)."""
    value = payload.get(TURN_POSITION_KEY)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    batch, index = value
    if not isinstance(batch, str) or not isinstance(index, int) or isinstance(index, bool):
        return None
    return batch, index


def neighbour_scores(candidates: Mapping[str, Candidate]) -> dict[str, float]:
    """Each positioned candidate's best neighbour's current ``score`` (see the module
    docstring); candidates with no scored neighbour are left out."""
    batches: dict[str, dict[int, str]] = {}
    for memory_id, cand in candidates.items():
        position = position_of(cand.payload)
        if position is not None:
            batches.setdefault(position[0], {})[position[1]] = memory_id
    out: dict[str, float] = {}
    for members in batches.values():
        if len(members) < 2:
            continue
        for index, memory_id in members.items():
            near = [
                candidates[members[i]].score
                for i in range(index - NEIGHBOUR_SPAN, index + NEIGHBOUR_SPAN + 1)
                if i != index and i in members
            ]
            if near:
                out[memory_id] = max(near)
    return out
