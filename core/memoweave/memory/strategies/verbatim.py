"""The ``verbatim`` strategy (what ``infer=False`` uses): every non-system message with
text is stored as it is, attributed to its speaker."""

from __future__ import annotations

from memoweave.memory.actions import Action, AddMemory, ExtractionRequest
from memoweave.runtime.steps import Steps, done


class VerbatimStrategy:
    """Store each non-system message's text as one memory; no LLM, no related memories."""

    name = "verbatim"
    needs_related = False

    def plan(self, request: ExtractionRequest) -> Steps[list[Action]]:
        """One ``AddMemory`` per user / assistant / tool message with non-blank text."""
        return done(
            [
                AddMemory(
                    text=message.text,
                    source_message_ids=(message.id,),
                    actor_id=message.name,
                    role=message.role,
                )
                for message in request.messages
                if message.role != "system" and message.text.strip()
            ]
        )
