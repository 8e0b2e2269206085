"""Checking a configuration's provider sections against the installed plugins.

The registry is described by the :class:`ConfigValidator` protocol, so this package does
not import :mod:`memoweave.plugins` (which imports it): no cycle between the two.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import BaseModel

from memoweave.config.diagnostics import Locator, config_error
from memoweave.config.models import PROVIDER_KINDS, MemoryConfig
from memoweave.errors import ProviderNotFound


class ConfigValidator(Protocol):
    """What :func:`validate_providers` needs of a registry
    (:meth:`memoweave.plugins.ProviderRegistry.validate_config`)."""

    def validate_config(
        self,
        kind: str,
        name: str,
        config: Mapping[str, Any] | BaseModel | None = None,
        *,
        file: str | None = None,
        locate: Locator | None = None,
    ) -> BaseModel: ...


def validate_providers(config: MemoryConfig, registry: ConfigValidator) -> dict[str, BaseModel]:
    """Validate each configured provider's ``config`` with its plugin's ``config_model``.

    Returns:
        The validated config model instance per section (only the configured ones), each
        checked against its registry kind (:data:`~memoweave.config.models.PROVIDER_KINDS`).

    Raises:
        ProviderNotFound: a provider name no plugin registers (path ``<kind>.provider``).
        ConfigError: a bad provider setting (path ``<kind>.config.<field>``), naming the file.
        DuplicateProviderError: the name is registered by two distributions.
    """
    validated: dict[str, BaseModel] = {}
    for kind, spec in config.provider_specs().items():
        try:
            validated[kind] = registry.validate_config(
                PROVIDER_KINDS[kind],
                spec.provider,
                spec.config,
                file=config.source,
                locate=config.locator,
            )
        except ProviderNotFound as exc:
            details = {k: v for k, v in exc.details.items() if k not in ("path", "file", "line")}
            raise config_error(
                exc.message,
                path=f"{kind}.provider",
                file=config.source,
                line=config.locator((kind, "provider")) if config.locator else None,
                cls=ProviderNotFound,
                hint=exc.hint,
                **details,
            ) from exc
    return validated
