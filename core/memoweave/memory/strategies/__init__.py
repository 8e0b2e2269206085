"""Write strategies: each turns one ``add`` request into actions (see ``actions.py``).

- ``verbatim``: ``infer=False``; each message stored as is.
- ``offline``: ``infer=True`` with no LLM configured; deterministic sentence extraction.
- ``additive`` (default with an LLM) and ``decide``: LLM extraction, chosen by
  ``extraction.strategy``.
- ``procedural``: ``memory_type="procedural_memory"``; an agent's run summarised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memoweave.errors import ConfigError, ValidationError
from memoweave.memory.actions import Strategy
from memoweave.memory.scope import Scope
from memoweave.memory.strategies.verbatim import VerbatimStrategy

if TYPE_CHECKING:
    from memoweave.memory.wiring import MemoryProviders

PROCEDURAL = "procedural_memory"


def select_strategy(
    providers: MemoryProviders, *, infer: bool, memory_type: Any, scope: Scope
) -> Strategy:
    """The strategy for one ``add`` call; raises ``ValidationError`` / ``ConfigError``."""
    if memory_type is not None and memory_type != PROCEDURAL:
        raise ValidationError(
            f"memory_type must be None or {PROCEDURAL!r}, got {memory_type!r}",
            hint=f"Omit memory_type, or pass memory_type={PROCEDURAL!r} with agent_id.",
        )
    if memory_type == PROCEDURAL:
        if scope.agent_id is None:
            raise ValidationError(
                "procedural memories need agent_id", hint="Pass agent_id='...' to add()."
            )
        if providers.llm is None:
            raise ConfigError(
                "procedural memories need an LLM to summarise the run",
                hint="Configure llm: {provider: ..., config: {...}}.",
            )
        from memoweave.memory.strategies.procedural import ProceduralStrategy

        return ProceduralStrategy(providers.llm, providers.extraction)
    if not infer:
        return VerbatimStrategy()
    if providers.llm is None:
        from memoweave.memory.strategies.offline import OfflineStrategy

        return OfflineStrategy()
    if providers.extraction.strategy == "decide":
        from memoweave.memory.strategies.decide import DecideStrategy

        return DecideStrategy(providers.llm, providers.extraction)
    from memoweave.memory.strategies.additive import AdditiveStrategy

    graph = providers.graph_store is not None
    return AdditiveStrategy(providers.llm, providers.extraction, graph=graph)


__all__ = ["PROCEDURAL", "VerbatimStrategy", "select_strategy"]
