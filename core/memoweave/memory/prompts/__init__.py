"""Versioned prompt templates (``<name>_v<N>.txt``), loaded from the package."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def load_prompt(name: str) -> str:
    """The text of prompt ``name`` (e.g. ``"additive_v2"``)."""
    return resources.files(__package__).joinpath(f"{name}.txt").read_text(encoding="utf-8")
