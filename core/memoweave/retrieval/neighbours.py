"""The neighbour signal: a chat turn is more likely what a query is about when the turns
said just before or after it are.

A question often shares its words with one turn and has its answer in the reply ("Did
you go to the concert?" / "Yes, on Friday with Mel"). Turns stored by one ``add`` call
(``add(messages, infer=False)``) carry their position in that call under
:data:`TURN_POSITION_KEY` (``[batch, index]``); the signal of a turn is the highest
first-pass fused score among the candidates of the same batch at most
:data:`NEIGHBOUR_SPAN` positions away, so it is in [0, 1]. Neighbours are read among the
candidates only (the dense and keyword top ``candidates``): a neighbour outside them adds
nothing.

Facts have no position; their neighbours are the other fact candidates observed at the
same moment (the same ``observed_ts``: the facts one ``add`` call distilled from a
conversation, or those a caller stored with one conversation's date), and a fact's signal
is the highest first-pass score among them. A question about one part of a conversation
often needs another fact of the same conversation (LoCoMo's observations: session-mates).
A group of more than :data:`FACT_GROUP_MAX` candidates (a bulk import under one date) says
nothing about any of them and gives no signal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memoweave.retrieval.candidates import Candidate
from memoweave.retrieval.profiles import KIND_TURN, MEMORY_KIND_KEY

TURN_POSITION_KEY = "turn_position"
"""Payload key of a turn's ``[batch, index]``: the ``add`` call that stored it (a random
hex id) and its position among that call's stored messages."""
NEIGHBOUR_SPAN = 2
"""How many positions away a neighbour may be (chosen on LoCoMo conv 26/30/41)."""
FACT_GROUP_MAX = 20
"""The most fact candidates observed at one moment that still count as one conversation's
(LoCoMo sessions give 2-10 of a search's candidates; 40 facts stored under one date do not
count)."""


def position_of(payload: Mapping[str, Any]) -> tuple[str, int] | None:
    """A turn's ``(batch, index)``, or ``None`` (facts, turns written before positions)."""
    value = payload.get(TURN_POSITION_KEY)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    batch, index = value
    if not isinstance(batch, str) or not isinstance(index, int) or isinstance(index, bool):
        return None
    return batch, index


def observed_group(payload: Mapping[str, Any]) -> float | None:
    """A fact's observation time (its group of neighbours), or ``None`` (turns, facts
    without one)."""
    if payload.get(MEMORY_KIND_KEY) == KIND_TURN:
        return None
    value = payload.get("observed_ts")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return float(value)


def neighbour_scores(candidates: Mapping[str, Candidate]) -> dict[str, float]:
    """Each positioned turn's and each grouped fact's best neighbour's current ``score``
    (see the module docstring); candidates with no scored neighbour are left out."""
    batches: dict[str, dict[int, str]] = {}
    groups: dict[float, list[str]] = {}
    for memory_id, cand in candidates.items():
        position = position_of(cand.payload)
        if position is not None:
            batches.setdefault(position[0], {})[position[1]] = memory_id
        elif (moment := observed_group(cand.payload)) is not None:
            groups.setdefault(moment, []).append(memory_id)
    out: dict[str, float] = {}
    for group in groups.values():
        if 2 <= len(group) <= FACT_GROUP_MAX:
            scores = sorted(((candidates[i].score, i) for i in group), reverse=True)
            (best, first), (second, _) = scores[0], scores[1]
            for memory_id in group:
                out[memory_id] = second if memory_id == first else best
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
