"""The embedder contract.

``embed(texts, purpose=...)`` returns one vector per input text, in input order, each of
length ``dims``. Contract details:

- batch-first: the core passes every text of one operation in one call; the provider
  splits into server-sized batches itself;
- ``embed([])`` returns ``[]`` without any I/O;
- ``purpose`` is ``"document"`` for texts being stored and ``"query"`` for search queries;
  models without asymmetric prompts ignore it;
- ``dims`` is known from configuration or discovered on the first call (``None`` before);
- texts may contain any unicode (CJK, emoji); empty strings are allowed;
- failures raise :class:`memoweave.errors.EmbeddingError`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Literal

from memoweave.runtime.aio import default_async, to_thread

Purpose = Literal["document", "query"]


class Embedder(ABC):
    """Turns texts into fixed-length float vectors."""

    @property
    @abstractmethod
    def dims(self) -> int | None:
        """The vector length, or ``None`` until discovered by the first ``embed`` call."""

    @abstractmethod
    def embed(self, texts: Sequence[str], *, purpose: Purpose = "document") -> list[list[float]]:
        """Embed ``texts`` in order; raise ``EmbeddingError`` on failure."""

    def close(self) -> None:  # noqa: B027 - optional hook, default does nothing
        """Release models or connections. Idempotent."""

    # -- optional async twins (same contract). The defaults run the sync method in a worker
    # thread; a provider with an async SDK overrides them with native async I/O, which
    # AsyncMemory then awaits (it runs the sync methods of the others in its own bounded
    # executor). See docs/plugins.md.

    @default_async
    async def aembed(
        self, texts: Sequence[str], *, purpose: Purpose = "document"
    ) -> list[list[float]]:
        """Async :meth:`embed`."""
        return await to_thread(self.embed, texts, purpose=purpose)

    @default_async
    async def aclose(self) -> None:
        """Async :meth:`close`."""
        await to_thread(self.close)
