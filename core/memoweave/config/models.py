"""The memoweave configuration models (pydantic v2, unknown fields rejected).

``MemoryConfig`` is the whole configuration; each provider is a :class:`ProviderSpec`
(``provider`` name + that provider's own ``config`` mapping, validated later against the
plugin's ``config_model`` by :func:`memoweave.config.validate_providers`).

Adding a section is one line in :class:`MemoryConfig`, e.g.
``extraction: ExtractionConfig = Field(default_factory=ExtractionConfig)`` with
``ExtractionConfig`` a :class:`ConfigModel` defined in its own module.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, PrivateAttr, field_serializer
from pydantic import ValidationError as PydanticValidationError

from memoweave.config.base import ConfigModel, raw_validation_errors
from memoweave.config.diagnostics import Locator, config_error, from_pydantic, relocate
from memoweave.config.interpolate import interpolate
from memoweave.config.mem0 import looks_like_mem0, translate_mem0
from memoweave.config.secrets import redact
from memoweave.config.sections import ExtractionConfig, LimitsConfig, RetrievalConfig
from memoweave.config.server import ServerConfig
from memoweave.errors import ConfigError


class ProviderSpec(ConfigModel):
    """Which provider to use and its own configuration."""

    provider: str = Field(min_length=1, description="Registered provider name, e.g. 'qdrant'.")
    config: dict[str, Any] = Field(
        default_factory=dict, description="Provider settings, validated by the plugin."
    )

    def __repr_args__(self) -> Any:
        """``repr`` shows secret-looking settings (``api_key``, ``token``...) masked."""
        yield "provider", self.provider
        yield "config", redact(self.config)

    @field_serializer("config", when_used="json")
    def _config_json(self, config: dict[str, Any]) -> Any:
        """``model_dump_json`` masks them too (``model_dump()`` keeps the values)."""
        return redact(config)


PROVIDER_KINDS: dict[str, str] = {
    "llm": "llm",
    "embedder": "embedder",
    "vector_store": "vector_store",
    "reranker": "reranker",
    "late_interaction": "reranker",
    "graph_store": "graph_store",
}
"""The registry kind of each provider section (``late_interaction`` names a reranker)."""


class MemoryConfig(ConfigModel):
    """Configuration of a ``Memory``; build it with :meth:`from_yaml` or :meth:`from_dict`."""

    vector_store: ProviderSpec | None = Field(
        default=None, description="None: the embedded default store under the memoweave home."
    )
    embedder: ProviderSpec | None = None
    llm: ProviderSpec | None = None
    reranker: ProviderSpec | None = None
    late_interaction: ProviderSpec | None = Field(
        default=None,
        description="A reranker whose scores are similarities (e.g. 'onnx-colbert'), fused "
        "into the first pass of the top retrieval.late_interaction_top_n at every search; "
        "None: none.",
    )
    graph_store: ProviderSpec | None = Field(
        default=None,
        description="Entities and relations beside the vectors (e.g. 'ladybug'); "
        "None: no graph memory.",
    )
    history_db_path: str | None = None
    collection_name: str = Field(default="memoweave", min_length=1)
    version: Literal["v1"] = Field(
        default="v1",
        description="The format of this configuration; a file written for another format "
        "is refused rather than misread.",
    )
    extraction: ExtractionConfig = Field(default_factory=lambda: ExtractionConfig())
    retrieval: RetrievalConfig = Field(default_factory=lambda: RetrievalConfig())
    server: ServerConfig = Field(default_factory=lambda: ServerConfig())
    limits: LimitsConfig = Field(default_factory=lambda: LimitsConfig())

    _source: str | None = PrivateAttr(default=None)
    _locate: Locator | None = PrivateAttr(default=None)

    @property
    def source(self) -> str | None:
        """The file this configuration was read from, if any."""
        return self._source

    @property
    def locator(self) -> Locator | None:
        """Maps a location to its line in :attr:`source` (YAML files only, else ``None``)."""
        return self._locate

    def provider_specs(self) -> dict[str, ProviderSpec]:
        """The configured providers by section (``llm``, ``embedder``, ``vector_store``,
        ``reranker``, ``late_interaction``, ``graph_store``; each section's registry kind
        in :data:`PROVIDER_KINDS`); unset ones are omitted."""
        specs = {section: getattr(self, section) for section in PROVIDER_KINDS}
        return {kind: spec for kind, spec in specs.items() if spec is not None}

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any], *, source: str | None = None) -> MemoryConfig:
        """Validate ``mapping`` after ``${VAR}`` interpolation.

        Raises:
            ConfigError: the message names the dotted path, ``source`` and the reason.
        """
        return cls._build(mapping, source=source, locate=None)

    @classmethod
    def from_yaml(cls, path: str | Path) -> MemoryConfig:
        """Read, interpolate and validate a YAML file (errors name the file and line)."""
        from memoweave.config.yaml_source import read_yaml  # PyYAML: only for a file

        data, locate = read_yaml(path)
        return cls._build(data, source=str(path), locate=locate)

    @classmethod
    def _build(
        cls, mapping: Mapping[str, Any], *, source: str | None, locate: Locator | None
    ) -> MemoryConfig:
        if not isinstance(mapping, Mapping):
            raise config_error(
                f"expected a mapping, got {type(mapping).__name__}", path="<root>", file=source
            )
        if looks_like_mem0(mapping):
            try:
                mapping = translate_mem0(mapping)
            except ConfigError as exc:
                raise relocate(exc, file=source) from None
            locate = None  # lines refer to the mem0 file, paths to the translation
        data = interpolate(mapping, file=source, locate=locate)
        try:
            with raw_validation_errors():
                config = cls.model_validate(data)
        except PydanticValidationError as exc:
            raise from_pydantic(exc, model=cls, file=source, locate=locate) from exc
        config._source = source
        config._locate = locate
        return config
