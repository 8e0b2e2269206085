"""Building the providers a ``Memory`` runs on, from configuration or ready instances."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoweave.config.models import PROVIDER_KINDS, MemoryConfig, ProviderSpec
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
from memoweave.runtime.background import Background

_KIND_INTERFACES: dict[str, type] = {
    "llm": LLM,
    "embedder": Embedder,
    "vector_store": VectorStore,
    "reranker": Reranker,
    "graph_store": GraphStore,
}
_INTERFACES: dict[str, type] = {
    section: _KIND_INTERFACES[kind] for section, kind in PROVIDER_KINDS.items()
}
"""The interface of each provider section, by its registry kind (``PROVIDER_KINDS``)."""


@dataclass
class MemoryProviders:
    """Everything one ``Memory`` uses; owns their lifetime."""

    config: MemoryConfig
    embedder: Embedder
    vector_store: VectorStore
    history: HistoryStore
    llm: LLM | None = None
    reranker: Reranker | None = None
    late_interaction: Reranker | None = None
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

    @property
    def models(self) -> tuple[Any, ...]:
        """Every provider but the history (one per section of ``PROVIDER_KINDS``, in that
        order: the order they are closed)."""
        return tuple(getattr(self, section) for section in PROVIDER_KINDS)

    def close(self) -> None:
        """Close every provider and the history. Idempotent."""
        for provider in self.models:
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
            hint="Pass llm=, embedder=, vector_store=, reranker=, late_interaction= or "
            "graph_store= provider instances.",
        )
    cfg = coerce_config(config)
    registry = overrides.get("registry")
    specs: dict[str, ProviderSpec | None] = {  # embedder None: the default, or the store's
        **{section: getattr(cfg, section) for section in PROVIDER_KINDS},
        "vector_store": cfg.vector_store or default_vector_store(),
    }
    pending: Background[Embedder] | None = None
    default_stack = _default_stack(cfg, overrides)
    if default_stack:
        # The embedded default store does not embed text itself, so the default embedder
        # (a model load, typically the slowest step) is started before the store is
        # created: its onnxruntime session builds (outside the GIL) while this thread
        # creates the store and opens the history and the side indexes.
        if registry is None:
            from memoweave.plugins import load_registry

            registry = load_registry()
        loaded = registry
        pending = Background(lambda: _default_embedder(loaded))
    built: dict[str, Any] = {}
    try:
        for kind, interface in _INTERFACES.items():
            registry = _build_one(kind, interface, specs[kind], cfg, overrides, registry, built)
        check_late_interaction(built["late_interaction"], built["reranker"])
        store: VectorStore = built["vector_store"]
        if pending is None:  # the others: once the store says whether it embeds text
            given, loaded = built["embedder"], registry
            pending = Background(lambda: _embedder_for(store, given, loaded))
        history = HistoryStore(cfg.history_db_path or default_history_path())
        try:
            indexes = SideIndexes.open(
                history, keyword=use_core_keyword_index(cfg.retrieval, store)
            )
        except BaseException:
            history.close()
            raise
    except BaseException:
        if pending is not None:
            with contextlib.suppress(Exception):
                made = pending.result()
                if made is not built.get("embedder"):
                    made.close()
        _close_built(built, overrides)
        raise
    try:
        built["embedder"] = pending.result()
        if default_stack and store.capabilities.embeds_text:  # what _embedder_for would do
            built["embedder"].close()
            built["embedder"] = StoreEmbedder(store)
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
        late_interaction=built["late_interaction"],
        graph_store=built["graph_store"],
        indexes=indexes,
    )


def _default_stack(cfg: MemoryConfig, overrides: Mapping[str, Any]) -> bool:
    """Whether the embedder and the store are the embedded defaults (none configured or
    passed)."""
    return (
        cfg.embedder is None
        and cfg.vector_store is None
        and overrides.get("embedder") is None
        and overrides.get("vector_store") is None
    )


def check_late_interaction(provider: Reranker | None, reranker: Reranker | None) -> None:
    """A ``late_interaction`` provider must score similarities (it joins the first pass),
    and the ``reranker`` beside it must not (``rerank=True`` would score the same top
    again as a first-pass signal, in place of the late stage): else a ``ConfigError``
    naming the section."""
    if provider is None:
        return
    if not provider.scores_are_similarities:
        raise ConfigError(
            f"late_interaction needs a reranker whose scores are similarities; "
            f"{type(provider).__name__}'s are not",
            hint="Name a late-interaction reranker there (e.g. onnx-colbert), and a "
            "cross-encoder in the reranker section.",
            details={"path": "late_interaction.provider"},
        )
    if reranker is not None and reranker.scores_are_similarities:
        raise ConfigError(
            f"with late_interaction set, the reranker section needs a cross-encoder; "
            f"{type(reranker).__name__} scores similarities as late_interaction does",
            hint="Name a cross-encoder (e.g. onnx) in the reranker section, or drop one "
            "of the two sections.",
            details={"path": "reranker.provider"},
        )


def _build_one(
    kind: str,
    interface: type,
    spec: ProviderSpec | None,
    cfg: MemoryConfig,
    overrides: Mapping[str, Any],
    registry: Any,
    built: dict[str, Any],
) -> Any:
    """Put the provider of section ``kind`` into ``built`` (the override, the configured one
    or ``None``); returns the registry (loaded here when first needed)."""
    instance = overrides.get(kind)
    if instance is not None:
        if not isinstance(instance, interface):
            raise ValidationError(
                f"{kind}= must be a {interface.__name__}, got {type(instance).__name__}",
                hint=f"Subclass memoweave.providers.{interface.__name__} or configure a provider.",
            )
        built[kind] = instance
        return registry
    if spec is None:
        built[kind] = None
        return registry
    if registry is None:
        from memoweave.plugins import load_registry

        registry = load_registry()
    try:
        registry_kind = PROVIDER_KINDS[kind]
        validated = registry.validate_config(  # errors name the YAML file and line
            registry_kind, spec.provider, spec.config, file=cfg.source, locate=cfg.locator
        )
        built[kind] = registry.create(registry_kind, spec.provider, validated)
    except ProviderNotFound as exc:
        if kind == "vector_store" and cfg.vector_store is None:
            raise default_stack_missing(exc) from exc
        raise
    return registry


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
    return _default_embedder(registry)


def _default_embedder(registry: Any) -> Embedder:
    """The embedded default embedder."""
    if registry is None:
        from memoweave.plugins import load_registry

        registry = load_registry()
    spec = default_embedder()
    try:
        default: Embedder = registry.create("embedder", spec.provider, spec.config)
        return default
    except ProviderNotFound as exc:
        raise default_stack_missing(exc) from exc


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
