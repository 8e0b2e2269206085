"""Building the providers a ``Memory`` runs on, from configuration or ready instances."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from memoweave.config.models import MemoryConfig, ProviderSpec
from memoweave.config.sections import ExtractionConfig, RetrievalConfig
from memoweave.errors import ConfigError, ProviderNotFound, ValidationError
from memoweave.index import SideIndexes
from memoweave.memory.defaults import (
    default_embedder,
    default_history_path,
    default_stack_missing,
    default_vector_store,
)
from memoweave.memory.history import HistoryStore
from memoweave.providers.embedder import Embedder
from memoweave.providers.graph_store import GraphStore
from memoweave.providers.llm import LLM
from memoweave.providers.reranker import Reranker
from memoweave.providers.store_embedder import StoreEmbedder
from memoweave.providers.vector_store import VectorStore

T = TypeVar("T")
_INTERFACES: dict[str, type] = {
    "llm": LLM,
    "embedder": Embedder,
    "vector_store": VectorStore,
    "reranker": Reranker,
    "graph_store": GraphStore,
}


@dataclass
class MemoryProviders:
    """Everything one ``Memory`` uses; owns their lifetime."""

    config: MemoryConfig
    embedder: Embedder
    vector_store: VectorStore
    history: HistoryStore
    llm: LLM | None = None
    reranker: Reranker | None = None
    indexes: SideIndexes | None = None
    graph_store: GraphStore | None = None

    @property
    def extraction(self) -> ExtractionConfig:
        return self.config.extraction

    @property
    def retrieval(self) -> RetrievalConfig:
        return self.config.retrieval

    @property
    def custom_instructions(self) -> str | None:
        return self.config.extraction.custom_instructions

    @property
    def window_messages(self) -> int:
        return self.config.extraction.window_messages

    @property
    def related_limit(self) -> int:
        return self.config.extraction.related_limit

    def close(self) -> None:
        """Close every provider and the history. Idempotent."""
        providers = (self.llm, self.embedder, self.vector_store, self.reranker, self.graph_store)
        for provider in providers:
            if provider is not None:
                provider.close()
        self.history.close()


def coerce_config(config: Any) -> MemoryConfig:
    """A ``MemoryConfig`` from ``None``, a dict, a YAML path or a ``MemoryConfig``."""
    if config is None:
        return MemoryConfig()
    if isinstance(config, MemoryConfig):
        return config
    if isinstance(config, Mapping):
        return MemoryConfig.from_dict(config)
    if isinstance(config, (str, Path)):
        return MemoryConfig.from_yaml(config)
    raise ValidationError(
        f"config must be a dict, a YAML file path or a MemoryConfig, got {type(config).__name__}",
        hint="Pass Memory.from_config({'vector_store': {...}}) or a path to a YAML file.",
    )


def build_providers(config: Any = None, **overrides: Any) -> MemoryProviders:
    """Create the configured providers; ``overrides`` are ready instances by kind."""
    unknown = set(overrides) - set(_INTERFACES) - {"registry"}
    if unknown:
        raise ValidationError(
            f"unknown Memory argument(s): {', '.join(sorted(unknown))}",
            hint="Pass llm=, embedder=, vector_store=, reranker= or graph_store= provider "
            "instances.",
        )
    cfg = coerce_config(config)
    registry = overrides.get("registry")
    specs: dict[str, ProviderSpec | None] = {
        "llm": cfg.llm,
        "embedder": cfg.embedder,  # None: the default, or the store's own embedding
        "vector_store": cfg.vector_store or default_vector_store(),
        "reranker": cfg.reranker,
        "graph_store": cfg.graph_store,
    }
    built: dict[str, Any] = {}
    for kind, interface in _INTERFACES.items():
        instance = overrides.get(kind)
        if instance is not None:
            if not isinstance(instance, interface):
                raise ValidationError(
                    f"{kind}= must be a {interface.__name__}, got {type(instance).__name__}",
                    hint=f"Subclass memoweave.providers.{interface.__name__} "
                    "or configure a provider.",
                )
            built[kind] = instance
            continue
        spec = specs[kind]
        if spec is None:
            built[kind] = None
            continue
        if registry is None:
            from memoweave.plugins import load_registry

            registry = load_registry()
        try:
            validated = registry.validate_config(  # errors name the YAML file and line
                kind, spec.provider, spec.config, file=cfg.source, locate=cfg.locator
            )
            built[kind] = registry.create(kind, spec.provider, validated)
        except BaseException as exc:
            _close_built(built, overrides)
            default_store = kind == "vector_store" and cfg.vector_store is None
            if isinstance(exc, ProviderNotFound) and default_store:
                raise default_stack_missing(exc) from exc
            raise
    store: VectorStore = built["vector_store"]
    given = built["embedder"]
    # the embedder (a model load, typically the slowest step) is made on another thread
    # while this one opens the history and the side indexes
    pending = _Background(lambda: _embedder_for(store, given, registry))
    try:
        history = HistoryStore(cfg.history_db_path or default_history_path())
        try:
            indexes = SideIndexes.open(
                history, keyword=use_core_keyword_index(cfg.retrieval, store)
            )
        except BaseException:
            history.close()
            raise
    except BaseException:
        with contextlib.suppress(Exception):
            made = pending.result()
            if made is not given:
                made.close()
        _close_built(built, overrides)
        raise
    try:
        built["embedder"] = pending.result()
    except BaseException:
        history.close()
        _close_built(built, overrides)
        raise
    return MemoryProviders(
        config=cfg,
        embedder=built["embedder"],
        vector_store=store,
        history=history,
        llm=built["llm"],
        reranker=built["reranker"],
        graph_store=built["graph_store"],
        indexes=indexes,
    )


def _embedder_for(store: VectorStore, embedder: Embedder | None, registry: Any) -> Embedder:
    """The configured embedder; else the store's own embedding when it embeds text itself
    (``capabilities.embeds_text``), else the embedded default."""
    if store.capabilities.embeds_text:
        if embedder is not None:
            raise ConfigError(
                f"{type(store).__name__} embeds the memory text itself (server-side "
                "embeddings), so an embedder would never be used",
                hint="Remove the embedder section, or turn the store's server-side embeddings off.",
                details={"path": "embedder"},
            )
        return StoreEmbedder(store)
    if embedder is not None:
        return embedder
    if registry is None:
        from memoweave.plugins import load_registry

        registry = load_registry()
    spec = default_embedder()
    try:
        default: Embedder = registry.create("embedder", spec.provider, spec.config)
        return default
    except ProviderNotFound as exc:
        raise default_stack_missing(exc) from exc


class _Background(Generic[T]):
    """``fn()`` running on a daemon thread; :meth:`result` waits, then returns or raises."""

    def __init__(self, fn: Callable[[], T]) -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], T]) -> None:
        try:
            self._value = fn()
        except BaseException as exc:  # re-raised by result() on the caller's thread
            self._error = exc

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set when there is no error


def _close_built(built: dict[str, Any], overrides: dict[str, Any]) -> None:
    for kind, provider in built.items():
        if provider is not None and overrides.get(kind) is None:
            provider.close()


def use_core_keyword_index(settings: RetrievalConfig, store: VectorStore) -> bool:
    """Whether keyword candidates come from the core's BM25 index (``keyword_source``
    ``core``, or ``auto`` with a store that has no native keyword search) rather than the
    store's native ``keyword_search`` (``store``, or ``auto`` with a store that has one)."""
    if settings.keyword_source == "store" and not store.capabilities.keyword_search:
        raise ValidationError(
            f"retrieval.keyword_source is 'store' but {type(store).__name__} has no native "
            "keyword search",
            hint="Use keyword_source: core (the default) or a store that supports it.",
        )
    if settings.keyword_source == "auto":
        return not store.capabilities.keyword_search
    return settings.keyword_source == "core"
