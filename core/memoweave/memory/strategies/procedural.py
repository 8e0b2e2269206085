"""The ``procedural`` strategy (``memory_type="procedural_memory"``, needs ``agent_id``).

The agent's execution history (the messages of this ``add``) is summarised by the LLM into
ONE memory, so the agent can resume or repeat the task without the transcript.
"""

from __future__ import annotations

from memoweave.config.sections import ExtractionConfig
from memoweave.memory.actions import Action, AddMemory, ExtractionRequest
from memoweave.memory.llm_json import generate_json
from memoweave.memory.prompts import load_prompt
from memoweave.memory.schemas import ProceduralSummary
from memoweave.memory.strategies.prompt_text import render_new
from memoweave.providers.llm import LLM
from memoweave.runtime.steps import Steps


class ProceduralStrategy:
    """Summarise the run into one memory with one LLM call."""

    needs_related = False

    def __init__(self, llm: LLM, config: ExtractionConfig) -> None:
        self.llm = llm
        self.config = config

    def plan(self, request: ExtractionRequest) -> Steps[list[Action]]:
        """One ``AddMemory`` holding the summary; ``LLMError`` if the model gives none."""
        transcript = render_new(request.messages)
        if not transcript:
            return []
        instructions = load_prompt("procedural_v2")
        if request.custom_prompt:
            instructions += f"\n\nAdditional instructions:\n{request.custom_prompt}"
        answer = yield from generate_json(
            self.llm,
            [
                {"role": "system", "content": instructions},
                {"role": "user", "content": f"EXECUTION HISTORY:\n{transcript}"},
            ],
            ProceduralSummary,
            repairs=self.config.max_repair_attempts,
            max_tokens=self.config.max_answer_tokens,
        )
        summary = answer.summary.strip()
        return [
            AddMemory(
                text=summary,
                source_message_ids=tuple(m.id for m in request.messages),
                role="assistant",
            )
        ]
