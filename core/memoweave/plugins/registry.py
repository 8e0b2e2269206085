"""The provider registry: every provider the installed plugins register, by kind and name.

Duplicate names: when two plugins register the same name for one kind, the registry still
loads (so every other provider stays usable), records a :class:`ProviderConflict`, warns,
and :meth:`ProviderRegistry.info` / :meth:`~ProviderRegistry.create` of that name raise
:class:`DuplicateProviderError` naming both distributions. ``memoweave plugins`` shows the
conflict. Fix it by uninstalling one distribution or by excluding it with
``MEMOWEAVE_PLUGINS``.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pluggy
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from memoweave.config.diagnostics import Locator, config_error, from_pydantic
from memoweave.errors import (
    DuplicateProviderError,
    EmbeddingError,
    GraphStoreError,
    LLMError,
    MemoweaveError,
    PluginError,
    ProviderError,
    ProviderNotFound,
    RerankerError,
    ValidationError,
    VectorStoreError,
)
from memoweave.plugins.host import (
    MemoweavePluginManager,
    PluginLoadFailure,
    PluginLoadWarning,
)
from memoweave.plugins.registration import KINDS, ProviderInfo, collect_providers
from memoweave.providers import LLM, Embedder, GraphStore, Reranker, VectorStore

_KIND_ERRORS: dict[str, type[ProviderError]] = {
    "llm": LLMError,
    "embedder": EmbeddingError,
    "vector_store": VectorStoreError,
    "reranker": RerankerError,
    "graph_store": GraphStoreError,
}
_KIND_INTERFACES: dict[str, type] = {
    "llm": LLM,
    "embedder": Embedder,
    "vector_store": VectorStore,
    "reranker": Reranker,
    "graph_store": GraphStore,
}


@dataclass(frozen=True)
class ProviderConflict:
    """Several plugins registered the same ``name`` for ``kind``; the name is unusable."""

    kind: str
    name: str
    providers: tuple[ProviderInfo, ...]

    def error(self) -> DuplicateProviderError:
        """The error ``info()`` / ``create()`` raise for this name."""
        sources = " and ".join(p.source for p in self.providers)
        return DuplicateProviderError(
            f"{self.kind} provider {self.name!r} is registered by both {sources}",
            details={
                "kind": self.kind,
                "name": self.name,
                "distributions": [p.distribution for p in self.providers],
            },
        )


class ProviderRegistry:
    """Look up, validate the configuration of, and build providers.

    Attributes:
        failures: plugins that could not be loaded or registered (skipped).
        conflicts: names registered by more than one plugin (unusable until resolved).
    """

    def __init__(
        self,
        providers: Iterable[ProviderInfo] = (),
        *,
        failures: Iterable[PluginLoadFailure] = (),
    ) -> None:
        by_key: dict[tuple[str, str], list[ProviderInfo]] = {}
        for info in providers:
            by_key.setdefault((info.kind, info.name), []).append(info)
        self._providers = by_key
        self.failures: list[PluginLoadFailure] = list(failures)
        self.conflicts: list[ProviderConflict] = [
            ProviderConflict(kind, name, tuple(infos))
            for (kind, name), infos in by_key.items()
            if len(infos) > 1
        ]

    @classmethod
    def from_plugin_manager(cls, pm: pluggy.PluginManager) -> ProviderRegistry:
        """Call the ``register_*`` hooks of every plugin registered in ``pm``."""
        providers, bad = collect_providers(pm)
        failures = list(pm.load_failures) if isinstance(pm, MemoweavePluginManager) else []
        for plugin, dist, error in bad:
            failure = PluginLoadFailure(plugin, dist.name, dist.version, error)
            failures.append(failure)
            warnings.warn(
                f"memoweave plugin skipped: {failure.describe()}", PluginLoadWarning, stacklevel=2
            )
        registry = cls(providers, failures=failures)
        for conflict in registry.conflicts:
            warnings.warn(conflict.error().message, PluginLoadWarning, stacklevel=2)
        return registry

    # -- lookup -------------------------------------------------------------------------

    def list(self, kind: str | None = None) -> builtins.list[ProviderInfo]:
        """All providers (of ``kind``), ordered by kind then name; conflicts appear twice."""
        kinds = KINDS if kind is None else (self._check_kind(kind),)
        return [
            info
            for k in kinds
            for (info_kind, _), infos in sorted(self._providers.items())
            if info_kind == k
            for info in infos
        ]

    def names(self, kind: str) -> builtins.list[str]:
        """The sorted provider names of ``kind``."""
        self._check_kind(kind)
        return sorted(name for k, name in self._providers if k == kind)

    def info(self, kind: str, name: str) -> ProviderInfo:
        """The provider ``name`` of ``kind``.

        Raises:
            ValidationError: unknown kind or a non-string name.
            ProviderNotFound: no plugin registers ``name`` (lists the installed names).
            DuplicateProviderError: several plugins register ``name``.
        """
        self._check_kind(kind)
        if not isinstance(name, str) or not name:
            raise ValidationError(
                f"provider name must be a non-empty string, got {name!r}",
                hint=f"Use one of: {', '.join(self.names(kind)) or 'none installed'}.",
            )
        infos = self._providers.get((kind, name))
        if not infos:
            raise self._not_found(kind, name)
        if len(infos) > 1:
            raise ProviderConflict(kind, name, tuple(infos)).error()
        return infos[0]

    # -- configuration and construction -------------------------------------------------

    def validate_config(
        self,
        kind: str,
        name: str,
        config: Mapping[str, Any] | BaseModel | None = None,
        *,
        file: str | None = None,
        locate: Locator | None = None,
    ) -> BaseModel:
        """Validate ``config`` with the provider's ``config_model``.

        ``config`` may be a mapping, an instance of the config model, or ``None`` (defaults).
        Errors are :class:`ConfigError` with the dotted path ``<kind>.config.<field>``;
        ``file`` and ``locate`` (from a YAML source) add the file and line to the message.
        """
        info = self.info(kind, name)
        model = info.config_model
        if isinstance(config, model):
            return config
        if config is None:
            config = {}
        if not isinstance(config, Mapping):
            raise config_error(
                f"expected a mapping or a {model.__name__}, got {type(config).__name__}",
                path=f"{kind}.config",
                file=file,
                line=locate((kind, "config")) if locate else None,
            )
        try:
            return model.model_validate(dict(config))
        except PydanticValidationError as exc:
            raise from_pydantic(
                exc, prefix=(kind, "config"), model=model, file=file, locate=locate
            ) from exc

    def create(
        self, kind: str, name: str, config: Mapping[str, Any] | BaseModel | None = None
    ) -> Any:
        """Build provider ``name`` of ``kind`` from ``config`` (see :meth:`validate_config`).

        Raises:
            ValidationError / ProviderNotFound / DuplicateProviderError: see :meth:`info`.
            ConfigError: ``config`` does not validate.
            LLMError / EmbeddingError / VectorStoreError / RerankerError / GraphStoreError:
                the factory failed (the original exception is the ``__cause__``).
            PluginError: the factory returned an object of the wrong type.
        """
        info = self.info(kind, name)
        validated = self.validate_config(kind, name, config)
        try:
            provider = info.factory(validated)
        except MemoweaveError:
            raise
        except Exception as exc:
            raise _KIND_ERRORS[kind](
                f"{kind} provider {name!r} ({info.source}) failed to start: "
                f"{type(exc).__name__}: {exc}",
                details={"kind": kind, "name": name, "distribution": info.distribution},
            ) from exc
        interface = _KIND_INTERFACES[kind]
        if not isinstance(provider, interface):
            raise PluginError(
                f"{info.source} (plugin {info.plugin!r}): the {kind} factory for {name!r} "
                f"returned {type(provider).__name__}, not a {interface.__name__}",
                details={"kind": kind, "name": name, "distribution": info.distribution},
            )
        return provider

    # -- helpers ------------------------------------------------------------------------

    @staticmethod
    def _check_kind(kind: str) -> str:
        if kind not in KINDS:
            raise ValidationError(
                f"unknown provider kind {kind!r}",
                hint=f"Use one of: {', '.join(KINDS)}.",
                details={"kind": kind},
            )
        return kind

    def _not_found(self, kind: str, name: str) -> ProviderNotFound:
        installed = self.names(kind)
        import difflib  # only for an error message

        close = difflib.get_close_matches(name.lower(), installed, n=3, cutoff=0.6)
        message = f"no {kind} provider named {name!r}; installed: {', '.join(installed) or 'none'}"
        if close:
            message += f"; did you mean {' or '.join(repr(c) for c in close)}?"
        package = "memoweave-" + name.lower().replace("_", "-")
        return ProviderNotFound(
            message,
            hint=f"Install the plugin that provides it (pip install {package}; from a source "
            f"checkout: pip install ./plugins/{package.removeprefix('memoweave-')}) or use an "
            "installed name; `memoweave plugins` lists them.",
            details={"kind": kind, "name": name, "installed": installed, "suggestions": close},
        )
