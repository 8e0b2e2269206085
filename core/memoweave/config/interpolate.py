"""``${VAR}`` / ``${VAR:-default}`` environment interpolation in configuration strings.

- ``${VAR}``: the value of ``VAR``; unset -> :class:`ConfigError` naming the variable.
- ``${VAR:-default}``: ``default`` when ``VAR`` is unset or empty (shell semantics).
- ``$${`` is an escape for a literal ``${``.

Only string values are interpolated (never mapping keys); the result stays a string and the
configuration models convert it (``"6333"`` validates as an int field). Defaults cannot
contain ``}`` and interpolations do not nest.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from memoweave.config.diagnostics import Loc, Locator, config_error, dotted

_TOKEN = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
_INNER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
_HINT = "Set the environment variable, or write ${VAR:-default}; use $${ for a literal ${."


def interpolate_string(
    text: str,
    *,
    loc: Loc = (),
    file: str | None = None,
    locate: Locator | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """Expand the interpolations in one string (see the module docstring)."""
    environ = os.environ if env is None else env

    def fail(reason: str) -> Exception:
        line = locate(loc) if locate else None
        return config_error(reason, path=dotted(loc), file=file, line=line, hint=_HINT)

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "$${":
            return "${"
        inner = match.group(1)
        if inner is None:
            raise fail("unterminated '${' (missing '}')")
        parsed = _INNER.fullmatch(inner)
        if parsed is None:
            raise fail(f"invalid interpolation {token!r}; use ${{VAR}} or ${{VAR:-default}}")
        name, default = parsed.group(1), parsed.group(2)
        value = environ.get(name)
        if default is not None:
            return value if value else default
        if value is None:
            raise fail(f"environment variable {name!r} is not set")
        return value

    return _TOKEN.sub(replace, text)


def interpolate(
    value: Any,
    *,
    loc: Loc = (),
    file: str | None = None,
    locate: Locator | None = None,
    env: Mapping[str, str] | None = None,
) -> Any:
    """A copy of ``value`` (nested mappings/lists) with every string value interpolated."""
    if isinstance(value, str):
        return interpolate_string(value, loc=loc, file=file, locate=locate, env=env)
    if isinstance(value, Mapping):
        return {
            key: interpolate(item, loc=(*loc, key), file=file, locate=locate, env=env)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [
            interpolate(item, loc=(*loc, i), file=file, locate=locate, env=env)
            for i, item in enumerate(value)
        ]
    return value
