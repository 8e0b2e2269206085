"""memoweave configuration: models, YAML loading with ``${VAR}`` interpolation, checks.

Errors are :class:`memoweave.errors.ConfigError` whose message reads
``<file>:<line>: <dotted.path>: <reason>``; see docs/configuration.md.
"""

from memoweave.config.base import ConfigModel
from memoweave.config.models import MemoryConfig, ProviderSpec
from memoweave.config.provider_check import validate_providers

__all__ = ["ConfigModel", "MemoryConfig", "ProviderSpec", "validate_providers"]
