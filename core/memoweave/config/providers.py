"""Checking a configuration's provider sections against the installed plugins."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from memoweave.config.diagnostics import config_error
from memoweave.config.models import MemoryConfig
from memoweave.errors import ProviderNotFound

if TYPE_CHECKING:
    from memoweave.plugins.registry import ProviderRegistry


def validate_providers(config: MemoryConfig, registry: ProviderRegistry) -> dict[str, BaseModel]:
    """Validate each configured provider's ``config`` with its plugin's ``config_model``.

    Returns:
        The validated config model instance per kind (only the configured kinds).

    Raises:
        ProviderNotFound: a provider name no plugin registers (path ``<kind>.provider``).
        ConfigError: a bad provider setting (path ``<kind>.config.<field>``), naming the file.
        DuplicateProviderError: the name is registered by two distributions.
    """
    validated: dict[str, BaseModel] = {}
    for kind, spec in config.provider_specs().items():
        try:
            validated[kind] = registry.validate_config(
                kind, spec.provider, spec.config, file=config.source, locate=config.locator
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
