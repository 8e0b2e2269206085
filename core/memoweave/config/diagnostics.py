"""Configuration error messages with a dotted path, the file and (for YAML) the line.

Every configuration problem becomes a :class:`memoweave.errors.ConfigError` (or a subclass)
whose message reads ``<file>:<line>: <dotted.path>: <reason>`` (file and line when known)
and whose ``details`` carry ``path``, ``reason``, ``file`` and ``line``.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pydantic

from memoweave.config.secrets import describe, scrub
from memoweave.errors import ConfigError

Loc = tuple[str | int, ...]
Locator = Callable[[Loc], "int | None"]
"""Maps a location in the configuration document to a 1-based line number."""

_MAX_INPUT_REPR = 60


def dotted(loc: Iterable[str | int]) -> str:
    """``("vector_store", "config", "hosts", 0)`` -> ``"vector_store.config.hosts[0]"``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


def format_message(path: str, reason: str, *, file: str | None, line: int | None) -> str:
    """``"<file>:<line>: <path>: <reason>"``, dropping the parts that are unknown."""
    if file is None:
        return f"{path}: {reason}"
    where = f"{file}:{line}" if line else file
    return f"{where}: {path}: {reason}"


def config_error(
    reason: str,
    *,
    path: str,
    file: str | None = None,
    line: int | None = None,
    cls: type[ConfigError] = ConfigError,
    hint: str | None = None,
    **details: Any,
) -> ConfigError:
    """Build a located configuration error of class ``cls``."""
    return cls(
        format_message(path, reason, file=file, line=line),
        hint=hint,
        details={"path": path, "reason": reason, "file": file, "line": line, **details},
    )


def relocate(err: ConfigError, *, file: str | None, line: int | None = None) -> ConfigError:
    """The same error (same class, hint and details) re-worded to name ``file`` and ``line``."""
    path = err.details.get("path", "<root>")
    reason = err.details.get("reason", err.message)
    extra = {k: v for k, v in err.details.items() if k not in ("path", "reason", "file", "line")}
    return config_error(
        reason, path=path, file=file, line=line, cls=type(err), hint=err.hint, **extra
    )


def _submodel(annotation: Any) -> type[pydantic.BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _submodel(arg)
            if found is not None:
                return found
    return None


def _model_at(model: type[pydantic.BaseModel] | None, loc: Sequence[str | int]) -> Any:
    for part in loc:
        field = model.model_fields.get(part) if model and isinstance(part, str) else None
        model = _submodel(field.annotation) if field else None
    return model


def _reason(error: Any, model: type[pydantic.BaseModel] | None) -> str:
    kind = error["type"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        parent = _model_at(model, error["loc"][:-1])
        if parent is None:
            return "unknown field"
        allowed = sorted(parent.model_fields)
        import difflib  # only for an error message

        close = difflib.get_close_matches(str(error["loc"][-1]), allowed, n=1)
        guess = f"; did you mean {close[0]!r}?" if close else ""
        return f"unknown field (allowed: {', '.join(allowed) or 'none'}){guess}"
    text = describe(error.get("input"))
    if len(text) > _MAX_INPUT_REPR:
        text = text[: _MAX_INPUT_REPR - 3] + "..."
    return f"{scrub(error['msg'], error.get('input'))} (got {text})"


def from_pydantic(
    exc: pydantic.ValidationError,
    *,
    prefix: Loc = (),
    model: type[pydantic.BaseModel] | None = None,
    file: str | None = None,
    locate: Locator | None = None,
) -> ConfigError:
    """Turn a pydantic error into one :class:`ConfigError` naming the first bad field.

    ``prefix`` is prepended to pydantic's locations (e.g. ``("vector_store", "config")``);
    ``model`` (the validated model) lets unknown-field errors list the allowed fields.
    All problems are kept in ``details["errors"]``.
    """
    problems: list[dict[str, Any]] = []
    for error in exc.errors(include_url=False):
        loc: Loc = (*prefix, *error["loc"])
        line = locate(loc) if locate else None
        problems.append({"path": dotted(loc), "reason": _reason(error, model), "line": line})
    first = problems[0]
    reason = first["reason"]
    if len(problems) > 1:
        others = ", ".join(p["path"] for p in problems[1:4])
        reason += f" (and {len(problems) - 1} more: {others})"
    return config_error(reason, path=first["path"], file=file, line=first["line"], errors=problems)
