"""What the LLM-driven strategies share: their inputs and the prompt preamble."""

from __future__ import annotations

from memoweave.config.sections import ExtractionConfig
from memoweave.memory.actions import ExtractionRequest
from memoweave.memory.messages import NormalizedMessage
from memoweave.memory.prompts import load_prompt
from memoweave.memory.strategies.prompt_text import system_text
from memoweave.memory.strategies.vision import describe_images
from memoweave.providers.llm import LLM
from memoweave.runtime.steps import Steps


class LLMStrategy:
    """Base of the strategies that call an LLM."""

    needs_related = True

    def __init__(self, llm: LLM, config: ExtractionConfig) -> None:
        self.llm = llm
        self.config = config

    def prepare(
        self, request: ExtractionRequest, prompt: str
    ) -> Steps[tuple[list[NormalizedMessage], str]]:
        """The new non-system messages (images described when the LLM can see) and the
        system instructions: prompt ``prompt`` plus the app's extra instructions (the
        per-call ``prompt``, the configured ones and the request's system messages)."""
        messages = yield from describe_images(
            self.llm, request.messages, repairs=self.config.max_repair_attempts
        )
        new = [m for m in messages if m.role != "system" and m.text.strip()]
        instructions = load_prompt(prompt)
        extra = "\n".join(x for x in (request.custom_prompt, system_text(messages)) if x)
        if extra:
            instructions += f"\n\nAdditional instructions:\n{extra}"
        return new, instructions
