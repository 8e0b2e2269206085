"""The ``decide`` strategy (mem0 v1 style): extract facts, then decide per memory.

Call 1 extracts facts from the new messages. Call 2 shows those facts and the related
existing memories (under short numbers) and asks for ADD / UPDATE / DELETE / NONE events.
An UPDATE supersedes the old memory (kept, marked ``superseded_by``); a DELETE is soft.
"""

from __future__ import annotations

from memoweave.memory.actions import (
    Action,
    AddMemory,
    ExtractionRequest,
    SoftDeleteMemory,
    SupersedeMemory,
)
from memoweave.memory.llm_json import generate_json
from memoweave.memory.prompts import load_prompt
from memoweave.memory.schemas import ExtractedFacts, MemoryDecisions
from memoweave.memory.strategies.llm_base import LLMStrategy
from memoweave.memory.strategies.prompt_text import (
    Numbered,
    observation_date,
    render_new,
    render_window,
)
from memoweave.runtime.steps import Steps


class DecideStrategy(LLMStrategy):
    """Two LLM calls: fact extraction, then an event per fact over related memories."""

    needs_related = True

    def plan(self, request: ExtractionRequest) -> Steps[list[Action]]:
        """Extract, then decide; raise ``LLMError`` if either answer is unusable."""
        new, instructions = yield from self.prepare(request, "decide_extract_v2")
        if not new:
            return []
        answer = yield from generate_json(
            self.llm,
            [
                {"role": "system", "content": instructions},
                {
                    "role": "user",
                    "content": f"Observation date: {observation_date(request.observed_at)}\n\n"
                    f"EARLIER MESSAGES:\n{render_window(request.window)}\n\n"
                    f"NEW MESSAGES:\n{render_new(new)}",
                },
            ],
            ExtractedFacts,
            repairs=self.config.max_repair_attempts,
            max_tokens=self.config.max_answer_tokens,
            max_memories=self.config.max_memories_per_add,
        )
        facts = [f for f in answer.facts if f]
        if not facts:
            return []
        sources = tuple(m.id for m in new)
        first = new[0]
        if not request.related:
            return [
                AddMemory(f, source_message_ids=sources, actor_id=first.name, role=first.role)
                for f in facts
            ]
        numbered = Numbered(tuple(request.related))
        listed = "\n".join(f"- {f}" for f in facts)
        decided = yield from generate_json(
            self.llm,
            [
                {"role": "system", "content": load_prompt("decide_update_v1")},
                {
                    "role": "user",
                    "content": f"EXISTING MEMORIES:\n{numbered.render()}\n\nNEW FACTS:\n{listed}",
                },
            ],
            MemoryDecisions,
            repairs=self.config.max_repair_attempts,
            max_tokens=self.config.max_answer_tokens,
            max_memories=self.config.max_memories_per_add,
        )
        actions: list[Action] = []
        for d in decided.memory:
            target = numbered.id_of(d.id)
            text = d.text or ""
            if d.event == "ADD" and text:
                actions.append(
                    AddMemory(
                        text, source_message_ids=sources, actor_id=first.name, role=first.role
                    )
                )
            elif d.event == "UPDATE" and target and text:
                actions.append(SupersedeMemory(target, text, source_message_ids=sources))
            elif d.event == "UPDATE" and text:
                actions.append(
                    AddMemory(
                        text, source_message_ids=sources, actor_id=first.name, role=first.role
                    )
                )
            elif d.event == "DELETE" and target:
                actions.append(SoftDeleteMemory(target))
        return actions
