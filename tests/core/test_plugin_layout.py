"""Every plugin of the repository has the one layout of docs/plugins.md ("Plugin layout"),
the one ``memoweave plugins new`` generates: the entry point in ``memoweave_<name>.plugin``
(declared and installed), an ``__init__`` without hooks, a ``config`` module for plugins
that register providers, a ``test`` extra with the kit, tests named for what they check."""

from __future__ import annotations

import ast
import importlib.metadata
import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="reads pyproject.toml (Python 3.11+)")

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
FOLDERS = sorted(p.parent for p in PLUGINS.glob("*/pyproject.toml"))
PROVIDER_HOOKS = {
    "register_vector_stores",
    "register_embedders",
    "register_llms",
    "register_rerankers",
    "register_graph_stores",
}


def _project(folder: Path) -> dict:
    with (folder / "pyproject.toml").open("rb") as handle:
        return dict(tomllib.load(handle)["project"])


def _package(folder: Path) -> Path:
    return folder / ("memoweave_" + folder.name.replace("-", "_"))


def _hooks(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any(ast.unparse(d).endswith("hookimpl") for d in node.decorator_list)
    }


def test_every_plugin_folder_is_found() -> None:
    assert len(FOLDERS) >= 10, FOLDERS


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_distribution_and_entry_point(folder: Path) -> None:
    project = _project(folder)
    package = _package(folder).name
    assert project["name"] == f"memoweave-{folder.name}"
    entry_points = project["entry-points"]["memoweave"]
    assert list(entry_points.values()) == [f"{package}.plugin"], entry_points
    assert any(r.startswith("memoweave[testing]") for r in project["optional-dependencies"]["test"])
    assert (folder / "README.md").is_file()


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_the_installed_entry_point_is_the_declared_one(folder: Path) -> None:
    """An editable install keeps the entry points of the day it was installed: a failure
    here means ``make install`` (or ``pip install -e plugins/<name>``) must rerun."""
    try:
        dist = importlib.metadata.distribution(f"memoweave-{folder.name}")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"memoweave-{folder.name} is not installed")
    installed = {ep.value for ep in dist.entry_points if ep.group == "memoweave"}
    assert installed == {f"{_package(folder).name}.plugin"}, installed


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_package_modules(folder: Path) -> None:
    package = _package(folder)
    for name in ("__init__.py", "plugin.py", "py.typed"):
        assert (package / name).is_file(), name
    assert not _hooks(package / "__init__.py"), "the @hookimpl functions belong in plugin.py"
    plugin = (package / "plugin.py").read_text(encoding="utf-8")
    assert re.search(r"^MEMOWEAVE_PLUGIN_API = \d+$", plugin, re.M)
    assert "__version__" in (package / "__init__.py").read_text(encoding="utf-8")
    if _hooks(package / "plugin.py") & PROVIDER_HOOKS:
        assert (package / "config.py").is_file(), "a provider's config models live in config.py"


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_tests_are_named_for_what_they_check(folder: Path) -> None:
    tests = {p.name for p in (folder / "tests").glob("test_*.py")}
    assert tests
    prefixes = {folder.name.replace("-", "_"), _package(folder).name}
    named_after_plugin = {t for t in tests if any(t.startswith(f"test_{p}_") for p in prefixes)}
    assert not named_after_plugin, "drop the plugin's name from the file name"
    if _hooks(_package(folder) / "plugin.py") & PROVIDER_HOOKS:
        assert "test_conformance.py" in tests, "the kit's suites run in tests/test_conformance.py"
