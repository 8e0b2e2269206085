"""The ``procedural`` strategy (``memory_type="procedural_memory"``, needs ``agent_id``).

The agent's execution history (the messages of this ``add``) is summarised by the LLM into
ONE memory, so the agent can resume or repeat the task without the transcript.
"""

from __future__ import annotations

from memoweave.config.sections import ExtractionConfig
from memoweave.errors import LLMError, MemoweaveError
from memoweave.memory.actions import Action, AddMemory, ExtractionRequest
from memoweave.memory.prompts import load_prompt
from memoweave.memory.strategies.render import render_new
from memoweave.providers.llm import LLM
from memoweave.runtime.steps import Steps, call


class ProceduralStrategy:
    """Summarise the run into one memory with one LLM call."""

    name = "procedural"
    needs_related = False

    def __init__(self, llm: LLM, config: ExtractionConfig) -> None:
        self.llm = llm
        self.config = config

    def plan(self, request: ExtractionRequest) -> Steps[list[Action]]:
        """One ``AddMemory`` holding the summary; ``LLMError`` if the model returns nothing."""
        transcript = render_new(request.messages)
        if not transcript:
            return []
        instructions = load_prompt("procedural_v1")
        if request.custom_prompt:
            instructions += f"\n\nAdditional instructions:\n{request.custom_prompt}"
        try:
            response = yield call(
                self.llm.generate,
                [
                    {"role": "system", "content": instructions},
                    {"role": "user", "content": f"EXECUTION HISTORY:\n{transcript}"},
                ],
                temperature=0.0,
            )
        except MemoweaveError:
            raise
        except Exception as exc:
            raise LLMError(f"the LLM failed: {type(exc).__name__}: {exc}") from exc
        summary = response.text.strip()
        if not summary:
            raise LLMError("the LLM returned an empty summary", hint="Nothing was written; retry.")
        return [
            AddMemory(
                text=summary,
                source_message_ids=tuple(m.id for m in request.messages),
                role="assistant",
            )
        ]
