"""The core packages' layering: ``runtime`` and ``index`` below ``graph`` below
``retrieval`` below ``memory``.

Every import counts, including those inside functions and ``TYPE_CHECKING`` blocks, so a
lazy import cannot hide a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import memoweave

CORE = Path(memoweave.__file__).resolve().parent
FORBIDDEN = {
    "runtime": ("memoweave.memory", "memoweave.retrieval", "memoweave.index"),
    "index": ("memoweave.memory", "memoweave.retrieval", "memoweave.graph"),
    "graph": ("memoweave.memory", "memoweave.retrieval"),
    "retrieval": ("memoweave.memory",),
}


def imported_modules(source: str, package: tuple[str, ...]) -> set[str]:
    """Every absolute module name ``source`` (a module of ``package``) imports, relative
    imports resolved."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_lower_packages_never_import_higher_ones(package: str) -> None:
    files = sorted((CORE / package).rglob("*.py"))
    assert files
    bad = {
        f"{path.relative_to(CORE)} imports {module}"
        for path in files
        for module in imported_modules(
            path.read_text(encoding="utf-8"), path.relative_to(CORE.parent).parts[:-1]
        )
        if module.startswith(FORBIDDEN[package])
    }
    assert not bad, sorted(bad)


def test_the_checker_sees_lazy_and_relative_imports() -> None:
    source = "def f():\n    from ..memory import api\n    import memoweave.retrieval.fusion\n"
    found = imported_modules(source, ("memoweave", "index"))
    assert {"memoweave.memory", "memoweave.memory.api", "memoweave.retrieval.fusion"} <= found
