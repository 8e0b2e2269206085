"""What a write strategy decides, before anything is written.

A strategy (``memoweave.memory.strategies.*``) reads the new messages, the related
existing memories and the message window, and returns a list of actions. It never writes:
the executor (:mod:`memoweave.memory.writer`) embeds all new texts in one batch, drops
duplicates, and applies every action in one journaled write.

The application's own edits are actions too (:class:`EditMemory`, :class:`DeleteMemory`),
so every write of memoweave goes through the same writer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, Union

from memoweave.memory.messages import NormalizedMessage
from memoweave.retrieval.profiles import KIND_FACT

if TYPE_CHECKING:
    from memoweave.runtime.steps import Steps


@dataclass(frozen=True)
class AddMemory:
    """Store ``text`` as a new memory; ``supersedes`` lists existing ids it replaces;
    ``relations`` are the (source, relationship, destination) triples a strategy extracted
    for the graph (``None``: the offline extractor links the text's entities)."""

    text: str
    source_message_ids: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    actor_id: str | None = None
    role: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    relations: tuple[tuple[str, str, str], ...] | None = None
    kind: str = KIND_FACT
    """``"fact"`` (distilled, or a text the caller gave as one) or ``"turn"`` (a chat
    message stored as it was said); search weighs its signals by it."""
    position: tuple[str, int] | None = None
    """A turn's (batch, index) in the ``add`` call that stored it (the neighbour signal)."""


@dataclass(frozen=True)
class UpdateMemory:
    """Rewrite an existing memory in place (same id), e.g. to add detail."""

    id: str
    text: str
    source_message_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class SupersedeMemory:
    """Replace existing memory ``id`` by a new memory with ``text`` (kept, marked superseded)."""

    id: str
    text: str
    source_message_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class SoftDeleteMemory:
    """Hide existing memory ``id`` (an LLM-decided DELETE): kept, marked deleted."""

    id: str


Action = Union[AddMemory, UpdateMemory, SupersedeMemory, SoftDeleteMemory]
"""What a strategy may decide."""


@dataclass(frozen=True)
class EditMemory:
    """The application rewrites memory ``id`` (``Memory.update``): new ``text`` (re-embedded)
    and/or new caller ``metadata`` (replacing the old keys); any status."""

    id: str
    text: str | None = None
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class DeleteMemory:
    """The application deletes memory ``id`` for good (``Memory.delete`` / ``delete_all``);
    the deletion is recorded in its history. ``missing_ok``: a memory already gone is
    skipped instead of raising ``NotFound``."""

    id: str
    missing_ok: bool = False


WriteAction = Union[Action, EditMemory, DeleteMemory]
"""Everything the writer applies."""


@dataclass(frozen=True)
class ExistingMemory:
    """A related memory shown to the strategy."""

    id: str
    text: str
    created_at: str | None = None


@dataclass
class ExtractionRequest:
    """Everything a strategy may look at for one ``add`` call."""

    messages: list[NormalizedMessage]
    observed_at: datetime
    related: list[ExistingMemory]
    window: list[NormalizedMessage]
    custom_prompt: str | None = None
    as_text: bool = False
    """The caller passed one plain text rather than a list of messages."""


class Strategy(Protocol):
    """A write strategy: turns one ``add`` request into actions."""

    needs_related: bool
    """Whether :attr:`ExtractionRequest.related` is filled (a search per ``add``)."""

    def plan(self, request: ExtractionRequest) -> Steps[list[Action]]:
        """The pipeline deciding the actions (its LLM calls are ``call`` steps, see
        :mod:`memoweave.runtime.steps`); raises ``LLMError`` / ``ValidationError``."""
        ...
