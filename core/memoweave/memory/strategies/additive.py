"""The ``additive`` strategy (default with an LLM; mem0 v3 style): ONE LLM call per add.

The prompt shows the observation date, the scope's related existing memories under short
numbers, the last few earlier messages (context only) and the numbered new messages. The
model answers new facts, each with the numbers of the existing memories it replaces and of
the messages it comes from. Replaced memories are superseded, never destroyed.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from memoweave.memory.actions import Action, AddMemory, ExtractionRequest
from memoweave.memory.llm_json import generate_json
from memoweave.memory.strategies.llm_base import LLMStrategy
from memoweave.memory.strategies.render import (
    Numbered,
    observation_date,
    render_new,
    render_window,
)
from memoweave.runtime.steps import Steps


class ExtractedMemory(BaseModel):
    """One fact the model extracted."""

    text: str = Field(min_length=1, max_length=2000)
    replaces: list[int] = Field(default_factory=list)
    sources: list[int] = Field(default_factory=list)


class AdditiveAnswer(BaseModel):
    """The model's whole answer."""

    memories: list[ExtractedMemory] = Field(default_factory=list)


class AdditiveStrategy(LLMStrategy):
    """Extract new facts and mark the memories they replace, in one LLM call."""

    name = "additive"
    needs_related = True

    def plan(self, request: ExtractionRequest) -> Steps[list[Action]]:
        """Call the LLM once (plus at most ``max_repair_attempts`` repairs)."""
        new, instructions = yield from self.prepare(request, "additive_v1")
        if not new:
            return []
        numbered = Numbered(tuple(request.related))
        user = (
            f"Observation date: {observation_date(request.observed_at)}\n\n"
            f"EXISTING MEMORIES:\n{numbered.render()}\n\n"
            f"EARLIER MESSAGES:\n{render_window(request.window)}\n\n"
            f"NEW MESSAGES:\n{render_new(new)}"
        )
        answer = yield from generate_json(
            self.llm,
            [{"role": "system", "content": instructions}, {"role": "user", "content": user}],
            AdditiveAnswer,
            repairs=self.config.max_repair_attempts,
        )
        actions: list[Action] = []
        for fact in answer.memories:
            sources = [new[n - 1] for n in fact.sources if 1 <= n <= len(new)] or new
            replaced = tuple(
                dict.fromkeys(i for n in fact.replaces if (i := numbered.id_of(n)) is not None)
            )
            first = sources[0]
            actions.append(
                AddMemory(
                    text=fact.text,
                    source_message_ids=tuple(m.id for m in sources),
                    supersedes=replaced,
                    actor_id=first.name,
                    role=first.role,
                )
            )
        return actions


__all__ = ["AdditiveAnswer", "AdditiveStrategy", "ExtractedMemory"]
