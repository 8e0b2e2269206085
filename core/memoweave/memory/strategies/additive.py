"""The ``additive`` strategy (default with an LLM; mem0 v3 style): ONE LLM call per add.

The prompt shows the observation date, the scope's related existing memories under short
numbers, the last few earlier messages (context only) and the numbered new messages. The
model answers new facts, each with the numbers of the existing memories it replaces and of
the messages it comes from. Replaced memories are superseded, never destroyed. With a graph
store the same call also asks for each fact's relations (:mod:`.relations`).
"""

from __future__ import annotations

from memoweave.config.sections import ExtractionConfig
from memoweave.memory.actions import Action, AddMemory, ExtractionRequest
from memoweave.memory.llm_json import generate_json
from memoweave.memory.prompts import load_prompt
from memoweave.memory.schemas import AdditiveAnswer, AdditiveGraphAnswer, ExtractedGraphMemory
from memoweave.memory.strategies.llm_base import LLMStrategy
from memoweave.memory.strategies.prompt_text import (
    Numbered,
    observation_date,
    render_new,
    render_window,
)
from memoweave.memory.strategies.relations import GRAPH_PROMPT, relation_triples
from memoweave.providers.llm import LLM
from memoweave.runtime.steps import Steps


class AdditiveStrategy(LLMStrategy):
    """Extract new facts and mark the memories they replace, in one LLM call; with
    ``graph``, their relations too."""

    needs_related = True

    def __init__(self, llm: LLM, config: ExtractionConfig, *, graph: bool = False) -> None:
        super().__init__(llm, config)
        self.graph = graph

    def plan(self, request: ExtractionRequest) -> Steps[list[Action]]:
        """Call the LLM once (plus at most ``max_repair_attempts`` repairs)."""
        new, instructions = yield from self.prepare(request, "additive_v2")
        if not new:
            return []
        if self.graph:
            instructions += "\n\n" + load_prompt(GRAPH_PROMPT)
        numbered = Numbered(tuple(request.related))
        user = (
            f"Observation date: {observation_date(request.observed_at)}\n\n"
            f"EXISTING MEMORIES:\n{numbered.render()}\n\n"
            f"EARLIER MESSAGES:\n{render_window(request.window)}\n\n"
            f"NEW MESSAGES:\n{render_new(new)}"
        )
        schema: type[AdditiveAnswer | AdditiveGraphAnswer] = (
            AdditiveGraphAnswer if self.graph else AdditiveAnswer
        )
        answer = yield from generate_json(
            self.llm,
            [{"role": "system", "content": instructions}, {"role": "user", "content": user}],
            schema,
            repairs=self.config.max_repair_attempts,
            max_tokens=self.config.max_answer_tokens,
            max_memories=self.config.max_memories_per_add,
        )
        actions: list[Action] = []
        for fact in answer.memories:
            if not fact.text:
                continue
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
                    relations=relation_triples(fact.relations)
                    if isinstance(fact, ExtractedGraphMemory) and fact.relations is not None
                    else None,
                )
            )
        return actions


__all__ = ["AdditiveStrategy"]
