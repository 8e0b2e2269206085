"""The core packages' layering: no import cycle between the core's packages (and
top-level modules); ``runtime`` and ``index`` below ``graph`` below ``retrieval`` below
``memory``.

Every import counts, including those inside functions and ``TYPE_CHECKING`` blocks, so a
lazy import cannot hide a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
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


def package_of(module: str) -> str | None:
    """The core package (or top-level module) ``module`` belongs to, ``None`` outside."""
    parts = module.split(".")
    if parts[0] != "memoweave" or len(parts) < 2:
        return None
    top = parts[1]
    return top if (CORE / top).is_dir() or (CORE / f"{top}.py").is_file() else None


def package_graph() -> dict[str, dict[str, set[str]]]:
    """``{package: {imported package: {importing files}}}`` over the core's files."""
    graph: dict[str, dict[str, set[str]]] = {}
    for path in sorted(CORE.rglob("*.py")):
        relative = path.relative_to(CORE)
        if len(relative.parts) == 1 and relative.name == "__init__.py":
            continue  # the root package re-exports; it is nobody's dependency
        source = relative.parts[0].removesuffix(".py")
        package = path.relative_to(CORE.parent).parts[:-1]
        for module in imported_modules(path.read_text(encoding="utf-8"), package):
            target = package_of(module)
            if target is not None and target != source:
                graph.setdefault(source, {}).setdefault(target, set()).add(str(relative))
    return graph


def cycles(graph: Mapping[str, Mapping[str, object]]) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_cycle_between_core_packages() -> None:
    graph = package_graph()
    assert {"memory", "retrieval", "cli", "config", "plugins"} <= set(graph)
    found = cycles(graph)
    detail = [
        f"{a} -> {b} in {sorted(graph[a][b])}"
        for component in found
        for a in component
        for b in component
        if b in graph.get(a, {})
    ]
    assert not found, detail


def test_the_cycle_finder_finds_cycles() -> None:
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b": 1}, "b": {}}) == []
