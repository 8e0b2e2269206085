"""Keeping secrets out of reprs, JSON dumps and configuration errors.

Two rules:

- a value under a secret-looking key (``api_key``, ``token``, ``password``, ``secret``,
  ``credentials``, ``authorization``...) of a provider's ``config`` is shown as
  :data:`MASK` in ``repr`` and ``model_dump_json`` (``model_dump()`` keeps it: the Python
  objects still carry it to the provider);
- a string that ``${VAR}`` interpolation put into the configuration is an
  :class:`Interpolated`, and configuration errors show it as ``<${VAR}>`` wherever it
  would be quoted, so a secret placed in the wrong field is never echoed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import SecretBytes, SecretStr

MASK = "**********"
_SECRET_KEY = re.compile(
    r"(api_?key|apikey|token|secret|passw(or)?d|credential|authori[sz]ation|private_?key|"
    r"access_?key|session_?key)",
    re.IGNORECASE,
)


class Interpolated(str):
    """A configuration string that contains the value of environment variables."""

    variables: tuple[str, ...] = ()

    @classmethod
    def of(cls, text: str, variables: tuple[str, ...]) -> Interpolated:
        """``text`` marked as carrying the values of ``variables``."""
        value = cls(text)
        value.variables = variables
        return value

    def placeholder(self) -> str:
        """How errors show this value: ``<${VAR}>``."""
        return "<" + "".join(f"${{{name}}}" for name in self.variables) + ">"


def is_secret_key(key: object) -> bool:
    """Whether a configuration key names a secret."""
    return isinstance(key, str) and _SECRET_KEY.search(key) is not None


def redact(value: Any) -> Any:
    """A copy of ``value`` (nested mappings and lists) with secret-keyed values and pydantic
    secrets replaced by :data:`MASK`."""
    if isinstance(value, (SecretStr, SecretBytes)):
        return MASK
    if isinstance(value, Mapping):
        return {k: MASK if is_secret_key(k) else redact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    return value


def scrub(text: str, *sources: Any) -> str:
    """``text`` with every :class:`Interpolated` string found in ``sources`` (nested
    mappings and lists) replaced by its placeholder."""
    found: list[Interpolated] = []
    stack = list(sources)
    while stack:
        item = stack.pop()
        if isinstance(item, Interpolated):
            found.append(item)
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    for secret in sorted(found, key=len, reverse=True):
        if secret:
            plain = str.__str__(secret)
            for form in (plain, repr(plain)[1:-1]):
                text = text.replace(form, secret.placeholder())
    return text


def describe(value: Any) -> str:
    """``repr(value)`` for an error message, secrets and interpolated values hidden."""
    if isinstance(value, Interpolated):
        return value.placeholder()
    return scrub(repr(redact(value)), value)
