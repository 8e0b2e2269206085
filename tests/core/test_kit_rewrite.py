"""Every kit module has its asserts rewritten by pytest, a new one included, so a plugin
author sees the compared values when a standard test fails."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import memoweave.testing
from memoweave.testing._rewrite import KIT_MODULES, NOT_REWRITTEN


def test_the_list_is_every_module_of_the_package() -> None:
    found = {m.name for m in pkgutil.iter_modules(memoweave.testing.__path__)}
    assert {name.rsplit(".", 1)[1] for name in KIT_MODULES} == found - NOT_REWRITTEN


def test_every_kit_module_with_asserts_is_rewritten() -> None:
    checked = []
    for name in KIT_MODULES:
        module = importlib.import_module(name)
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        if any(isinstance(node, ast.Assert) for node in ast.walk(tree)):
            # pytest's rewriter imports builtins as ``@py_builtins`` into a module it rewrote
            assert "@py_builtins" in vars(module), f"{name} was imported without rewriting"
            checked.append(name)
    assert "memoweave.testing.vs_invalid" in checked


def test_the_modules_imported_first_hold_no_asserts() -> None:
    for stem in NOT_REWRITTEN:
        module = importlib.import_module(f"memoweave.testing.{stem}".removesuffix(".__init__"))
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        assert not any(isinstance(node, ast.Assert) for node in ast.walk(tree)), stem
