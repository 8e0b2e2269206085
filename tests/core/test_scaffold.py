"""``memoweave plugins new``: the generated plugin passes its conformance suite as it is,
and ``plugins/example-dictstore`` is exactly the scaffold's rendering (one copy)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from memoweave.cli.main import main
from memoweave.errors import ValidationError
from memoweave.scaffold import names, new_plugin, render

pytest_plugins = ("pytester",)
EXAMPLE = Path(__file__).resolve().parents[2] / "plugins" / "example-dictstore"


def test_the_example_plugin_is_the_scaffold_rendering() -> None:
    """Edit the template (core/memoweave/scaffold/), then regenerate the example with
    ``memoweave plugins new example-dictstore --provider dictstore`` (class prefix Dict)."""
    files = render("vector_store", names("example-dictstore", provider="dictstore", prefix="Dict"))
    assert len(files) == 8
    for relative, text in files.items():
        assert (EXAMPLE / relative).read_text(encoding="utf-8") == text, relative


def test_a_generated_plugin_passes_its_conformance_suite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = CliRunner().invoke(main, ["plugins", "new", "acme-store", "--dir", str(pytester.path)])
    assert result.exit_code == 0, result.output
    folder = pytester.path / "acme-store"
    # what `pip install -e` would do: the package on sys.path, the entry point declared
    info = pytester.path / "site" / "memoweave_acme_store-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: memoweave-acme-store\nVersion: 0.1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[memoweave]\nacme-store = memoweave_acme_store.plugin\n"
    )
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.syspath_prepend(str(pytester.path / "site"))
    monkeypatch.delenv("MEMOWEAVE_PLUGINS", raising=False)
    monkeypatch.delenv("MEMOWEAVE_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    run = pytester.runpytest_inprocess(
        str(folder / "tests"), "-q", "-p", "no:cacheprovider",
        "-o", "asyncio_default_fixture_loop_scope=function",
    )  # fmt: skip
    outcomes = run.parseoutcomes()
    assert outcomes.get("passed", 0) >= 50 and set(outcomes) <= {"passed", "skipped"}, outcomes


def test_bad_names_and_an_existing_folder_are_refused(tmp_path: Path) -> None:
    for bad in ("", "Acme", "acme_store", "-acme", "acme-"):
        with pytest.raises(ValidationError):
            names(bad)
    with pytest.raises(ValidationError, match="kind"):
        render("llm", names("acme"))
    new_plugin("acme", tmp_path)
    with pytest.raises(ValidationError, match="already exists"):
        new_plugin("acme", tmp_path)
