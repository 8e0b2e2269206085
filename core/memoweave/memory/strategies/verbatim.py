"""The ``verbatim`` strategy (what ``infer=False`` uses): every non-system message with
text is stored as it is, attributed to its speaker. Messages are stored as ``turn``
memories; a plain text passed to ``add`` (a fact the caller distilled) as a ``fact``."""

from __future__ import annotations

from memoweave.memory.actions import Action, AddMemory, ExtractionRequest
from memoweave.retrieval.profiles import KIND_FACT, KIND_TURN
from memoweave.runtime.steps import Steps, done


class VerbatimStrategy:
    """Store each non-system message's text as one memory; no LLM, no related memories."""

    needs_related = False

    def plan(self, request: ExtractionRequest) -> Steps[list[Action]]:
        """One ``AddMemory`` per user / assistant / tool message with non-blank text."""
        kind = KIND_FACT if request.as_text else KIND_TURN
        return done(
            [
                AddMemory(
                    text=message.text,
                    source_message_ids=(message.id,),
                    actor_id=message.name,
                    role=message.role,
                    kind=kind,
                )
                for message in request.messages
                if message.role != "system" and message.text.strip()
            ]
        )
