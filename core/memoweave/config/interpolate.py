"""``${VAR}`` / ``${VAR:-default}`` environment interpolation in configuration strings.

- ``${VAR}``: the value of ``VAR``; unset -> :class:`ConfigError` naming the variable.
- ``${VAR:-default}``: ``default`` when ``VAR`` is unset or empty (shell semantics); the
  default may itself contain interpolations (``${A:-${B:-x}}``), expanded only when used.
- ``$${`` is an escape for a literal ``${``.

Only string values are interpolated (never mapping keys); the result stays a string and the
configuration models convert it (``"6333"`` validates as an int field). A string that took
the value of a variable is an :class:`~memoweave.config.secrets.Interpolated`, which
configuration errors never quote (it may be a secret in the wrong field). Parsing is one
left-to-right pass; defaults nest at most :data:`MAX_NESTING` deep.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from memoweave.config.diagnostics import Loc, Locator, config_error, dotted
from memoweave.config.secrets import Interpolated

MAX_NESTING = 8
_HINT = "Set the environment variable, or write ${VAR:-default}; use $${ for a literal ${."


class _Expander:
    """One string's expansion: a cursor over ``text`` and the variables used."""

    def __init__(self, text: str, environ: Mapping[str, str], fail: Any) -> None:
        self.text = text
        self.pos = 0
        self.environ = environ
        self.fail = fail
        self.used: list[str] = []

    def expand(self, depth: int, *, until_brace: bool, use: bool) -> str:
        """Expand from the cursor to the end (or, inside a default, to its closing ``}``).
        With ``use=False`` the text is only parsed (an unused default)."""
        text, out = self.text, list[str]()
        while self.pos < len(text):
            if until_brace and text[self.pos] == "}":
                self.pos += 1
                return "".join(out)
            if text.startswith("$${", self.pos):
                out.append("${")
                self.pos += 3
            elif text.startswith("${", self.pos):
                self.pos += 2
                out.append(self._variable(depth, use=use))
            else:
                nxt = _next_special(text, self.pos, until_brace)
                out.append(text[self.pos : nxt])
                self.pos = nxt
        if until_brace:
            raise self.fail("unterminated '${' (missing '}')")
        return "".join(out)

    def _variable(self, depth: int, *, use: bool) -> str:
        if depth >= MAX_NESTING:
            raise self.fail(f"interpolation defaults nest more than {MAX_NESTING} deep")
        text, start = self.text, self.pos
        end = start
        while end < len(text) and _is_name_char(text[end]):
            end += 1
        name = text[start:end]
        if not name or name[0].isdigit():
            close = text.find("}", start)
            shown = text[start - 2 : close + 1] if close >= 0 else text[start - 2 :]
            if close < 0:
                raise self.fail("unterminated '${' (missing '}')")
            raise self.fail(f"invalid interpolation {shown!r}; use ${{VAR}} or ${{VAR:-default}}")
        self.pos = end
        value = self.environ.get(name) if use else None
        if text.startswith("}", end):
            self.pos = end + 1
            if use and value is None:
                raise self.fail(f"environment variable {name!r} is not set")
            if use:
                self.used.append(name)
            return value or ""
        if text.startswith(":-", end):
            self.pos = end + 2
            if value:
                self.expand(depth + 1, until_brace=True, use=False)  # skip the default
                self.used.append(name)
                return value
            return self.expand(depth + 1, until_brace=True, use=use)
        close = text.find("}", end)
        if close < 0:
            raise self.fail("unterminated '${' (missing '}')")
        raise self.fail(
            f"invalid interpolation {text[start - 2 : close + 1]!r}; use ${{VAR}} or "
            "${VAR:-default}"
        )


def _is_name_char(char: str) -> bool:
    return char == "_" or (char.isascii() and char.isalnum())


def _next_special(text: str, pos: int, until_brace: bool) -> int:
    """The index of the next ``$`` (or ``}`` inside a default) at or after ``pos + 1``."""
    candidates = [i for i in (text.find("$", pos + 1),) if i >= 0]
    if until_brace:
        brace = text.find("}", pos + 1)
        if brace >= 0:
            candidates.append(brace)
    return min(candidates) if candidates else len(text)


def interpolate_string(
    text: str,
    *,
    loc: Loc = (),
    file: str | None = None,
    locate: Locator | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """Expand the interpolations in one string (see the module docstring)."""
    if "${" not in text:
        return text

    def fail(reason: str) -> Exception:
        line = locate(loc) if locate else None
        return config_error(reason, path=dotted(loc), file=file, line=line, hint=_HINT)

    expander = _Expander(text, os.environ if env is None else env, fail)
    result = expander.expand(0, until_brace=False, use=True)
    return Interpolated.of(result, tuple(expander.used)) if expander.used else result


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
