"""The base of every configuration model."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic import ValidationError as PydanticValidationError

from memoweave.config.diagnostics import from_pydantic

_RAW_ERRORS: ContextVar[bool] = ContextVar("memoweave_config_raw_errors", default=False)


@contextmanager
def raw_validation_errors() -> Iterator[None]:
    """Inside this block, :class:`ConfigModel` raises pydantic's own ``ValidationError``.

    pydantic calls an overridden ``__init__`` for nested models too; keeping their errors raw
    lets the outermost caller convert them once, with the full dotted path and the file.
    """
    token = _RAW_ERRORS.set(True)
    try:
        yield
    finally:
        _RAW_ERRORS.reset(token)


class ConfigModel(BaseModel):
    """Base of every configuration model: unknown fields are errors, and direct
    construction raises :class:`memoweave.errors.ConfigError` (not pydantic's error).
    Each model's validator is built by its first validation (``defer_build``), so
    importing memoweave builds none and a process builds only the ones it uses."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    def __init__(self, **data: Any) -> None:
        if _RAW_ERRORS.get():
            super().__init__(**data)
            return
        with raw_validation_errors():
            try:
                super().__init__(**data)
            except PydanticValidationError as exc:
                raise from_pydantic(exc, model=type(self)) from exc
