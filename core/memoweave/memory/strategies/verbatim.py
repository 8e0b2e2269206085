"""The ``verbatim`` strategy (what ``infer=False`` uses): every non-system message with
text is stored as it is, attributed to its speaker. Messages are stored as ``turn``
memories, each with its position in the call (the neighbour signal of search); a plain
text passed to ``add`` (a fact the caller distilled) as a ``fact``."""

from __future__ import annotations

import uuid

from memoweave.memory.actions import Action, AddMemory, ExtractionRequest
from memoweave.retrieval.profiles import KIND_FACT, KIND_TURN
from memoweave.runtime.steps import Steps, done


class VerbatimStrategy:
    """Store each non-system message's text as one memory; no LLM, no related memories."""

    needs_related = False

    def plan(self, request: ExtractionRequest) -> Steps[list[Action]]:
        """One ``AddMemory`` per user / assistant / tool message with non-blank text."""
        kind = KIND_FACT if request.as_text else KIND_TURN
        kept = [m for m in request.messages if m.role != "system" and m.text.strip()]
        batch = uuid.uuid4().hex
        return done(
            [
                AddMemory(
                    text=message.text,
                    source_message_ids=(message.id,),
                    actor_id=message.name,
                    role=message.role,
                    kind=kind,
                    position=(batch, index) if kind == KIND_TURN else None,
                )
                for index, message in enumerate(kept)
            ]
        )
