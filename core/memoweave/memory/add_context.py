"""What an ``add`` shows its strategy besides the new messages, and what it stores of them.

:func:`extraction_context` is the pipeline of the related memories (BM25 over the scope,
topped up with the most recent ones; only for strategies that need them) and the
scope's message window, read together; :func:`stored_message` is the window row kept
for one new message.
"""

from __future__ import annotations

from datetime import datetime

from memoweave.index.keyword_index import KeywordIndex
from memoweave.memory.actions import ExistingMemory
from memoweave.memory.clock import iso
from memoweave.memory.history import StoredMessage
from memoweave.memory.messages import NormalizedMessage
from memoweave.memory.related import related_memories
from memoweave.memory.scope import Scope
from memoweave.memory.wiring import MemoryProviders
from memoweave.runtime.steps import Steps, call, done, gather


def extraction_context(
    providers: MemoryProviders,
    keyword_index: KeywordIndex | None,
    scope: Scope,
    text: str,
    *,
    needs_related: bool,
) -> Steps[tuple[list[ExistingMemory], list[NormalizedMessage]]]:
    """``(related memories, message window)`` of ``scope`` for new messages ``text``."""
    related, window = yield gather(
        _related(providers, keyword_index, scope, text) if needs_related else done([]),
        call(_window, providers, scope),
    )
    return related, window


def stored_message(message: NormalizedMessage, scope: Scope, observed: datetime) -> StoredMessage:
    """The message-window row of one new message."""
    return StoredMessage(
        id=message.id,  # normalize_messages always sets an id
        scope=scope.key(),
        role=message.role,
        content=message.text,
        created_at=message.created_at or iso(observed),
        name=message.name,
        **scope.as_dict(),
    )


def _related(
    p: MemoryProviders, keyword_index: KeywordIndex | None, scope: Scope, text: str
) -> Steps[list[ExistingMemory]]:
    hits = yield from related_memories(
        p.vector_store, keyword_index, p.history, text, scope=scope, limit=p.related_limit
    )
    return [
        ExistingMemory(h.id, h.payload.get("memory", ""), h.payload.get("created_at")) for h in hits
    ]


def _window(p: MemoryProviders, scope: Scope) -> list[NormalizedMessage]:
    rows = p.history.recent_messages(scope.key(), p.window_messages)
    return [NormalizedMessage(r.role, r.content, r.id, r.name, (), r.created_at) for r in rows]
