"""The plugin host: entry-point discovery, built-ins, autoload switch, allowlist, failures.

External plugins come from tests/fixtures/plugin_site, a directory that importlib.metadata
reads exactly like site-packages (``*.dist-info`` with METADATA + entry_points.txt).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memoweave.plugins import PluginLoadWarning, get_plugin_manager
from memoweave.plugins.host import BUILTIN_PLUGINS, DistributionRef

PLUGIN_SITE = Path(__file__).resolve().parents[1] / "fixtures" / "plugin_site"


@pytest.fixture
def plugin_site(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put the fixture distributions on sys.path with no plugin env vars set."""
    monkeypatch.delenv("MEMOWEAVE_PLUGINS", raising=False)
    monkeypatch.delenv("MEMOWEAVE_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.syspath_prepend(str(PLUGIN_SITE))
    return PLUGIN_SITE


def plugin_names(pm) -> set[str]:
    return {name for name, plugin in pm.list_name_plugin() if plugin is not None}


def test_builtins_load_without_autoload(plugin_site: Path) -> None:
    pm = get_plugin_manager(autoload=False)
    assert plugin_names(pm) == set(BUILTIN_PLUGINS)
    assert pm.load_failures == []
    assert pm.distribution_of(BUILTIN_PLUGINS[0]).name == "memoweave"


def test_entry_point_plugin_is_discovered_with_its_distribution(plugin_site: Path) -> None:
    pm = get_plugin_manager(allow=["overlap"])
    assert plugin_names(pm) == {"overlap", *BUILTIN_PLUGINS}
    assert pm.distribution_of("overlap") == DistributionRef("memoweave-fixture-overlap", "1.2.0")
    assert pm.load_failures == []


def test_each_call_builds_a_fresh_manager(plugin_site: Path) -> None:
    first = get_plugin_manager(allow=["overlap"])
    second = get_plugin_manager(autoload=False)
    assert first is not second
    assert "overlap" in plugin_names(first)
    assert "overlap" not in plugin_names(second)


def test_env_var_disables_autoload_but_keeps_builtins(
    plugin_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMOWEAVE_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("MEMOWEAVE_PLUGINS", "overlap")
    assert plugin_names(get_plugin_manager()) == set(BUILTIN_PLUGINS)


def test_env_allowlist_matches_distribution_names_normalised(
    plugin_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMOWEAVE_PLUGINS", " Memoweave_Fixture_Dup , overlap")
    assert plugin_names(get_plugin_manager()) == {"dup", "overlap", *BUILTIN_PLUGINS}


def test_empty_env_allowlist_loads_only_builtins(
    plugin_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMOWEAVE_PLUGINS", "")
    pm = get_plugin_manager()
    assert plugin_names(pm) == set(BUILTIN_PLUGINS)
    assert pm.load_failures == []


def test_allowlist_name_matching_nothing_is_reported(plugin_site: Path) -> None:
    with pytest.warns(PluginLoadWarning, match="not-installed"):
        pm = get_plugin_manager(allow="overlap,not-installed")
    assert "overlap" in plugin_names(pm)
    [failure] = pm.load_failures
    assert failure.plugin == "not-installed"
    assert "allowlist" in failure.error


def test_plugin_failing_to_import_is_reported_and_others_still_load(plugin_site: Path) -> None:
    with pytest.warns(PluginLoadWarning, match=r"memoweave-fixture-broken 0\.3\.0"):
        pm = get_plugin_manager(allow=["broken", "overlap"])
    assert plugin_names(pm) == {"overlap", *BUILTIN_PLUGINS}
    [failure] = pm.load_failures
    assert (failure.plugin, failure.distribution, failure.version) == (
        "broken",
        "memoweave-fixture-broken",
        "0.3.0",
    )
    assert failure.error.startswith("ImportError: No module named 'memoweave_fixture_missing_sdk'")
    assert failure.describe().startswith("memoweave-fixture-broken 0.3.0 (plugin 'broken'): ")


def test_hook_with_wrong_argument_name_is_unregistered_and_reported(plugin_site: Path) -> None:
    with pytest.warns(PluginLoadWarning, match="memoweave-fixture-badargs"):
        pm = get_plugin_manager(allow=["badargs", "overlap"])
    assert plugin_names(pm) == {"overlap", *BUILTIN_PLUGINS}
    assert pm.hook.register_llms.get_hookimpls() == []
    [failure] = pm.load_failures
    assert failure.distribution == "memoweave-fixture-badargs"
    assert "registrar" in failure.error


def test_hook_matching_no_spec_is_unregistered_by_check_pending(plugin_site: Path) -> None:
    with pytest.warns(PluginLoadWarning, match="memoweave-fixture-typo"):
        pm = get_plugin_manager(allow=["typo", "overlap"])
    assert plugin_names(pm) == {"overlap", *BUILTIN_PLUGINS}
    pm.check_pending()  # nothing pending any more
    [failure] = pm.load_failures
    assert (failure.distribution, failure.version) == ("memoweave-fixture-typo", "0.5.0")
    assert "unknown hook register_vectorstores" in failure.error


def test_name_and_version_come_from_the_metadata_headers_alone(tmp_path: Path) -> None:
    """The header block is read as the email parser reads it (first empty line ends it):
    a ``Version:`` line in the long description, or continued headers, change nothing;
    every installed distribution gives what ``dist.metadata`` gives."""
    import importlib.metadata

    from memoweave.plugins.host import distribution_ref

    info = tmp_path / "memoweave_fixture_desc-2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: memoweave-fixture-desc\nSummary: a long\n"
        "  summary continued\nVersion: 2.0\nLicense: MIT\n\n"
        "Version: 9.9\nName: not-the-name\n",
        encoding="utf-8",
    )
    dist = importlib.metadata.PathDistribution(info)
    assert distribution_ref(dist, "fallback") == DistributionRef("memoweave-fixture-desc", "2.0")
    assert dist.metadata["Version"] == "2.0"
    (info / "METADATA").write_text("Metadata-Version: 2.1\n", encoding="utf-8")
    assert distribution_ref(dist, "fallback") == DistributionRef("fallback", None)
    for installed in importlib.metadata.distributions():
        meta = installed.metadata
        expected = DistributionRef(meta["Name"] or installed.name, meta["Version"])
        assert distribution_ref(installed, installed.name) == expected


def test_loading_the_plugins_parses_no_metadata_file_whole(
    plugin_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every plugin's distribution is named from its header block: nothing asks for
    ``dist.metadata`` (or ``dist.name``, which parses it), whose email parse of the long
    description cost ~0.5 ms a plugin at every start."""
    import importlib.metadata

    parsed: list[object] = []
    whole = importlib.metadata.Distribution.metadata

    def counted(dist: importlib.metadata.Distribution) -> object:
        parsed.append(dist)
        return whole.fget(dist)  # type: ignore[attr-defined]

    monkeypatch.setattr(importlib.metadata.Distribution, "metadata", property(counted))
    pm = get_plugin_manager(autoload=True)
    assert "overlap" in plugin_names(pm)
    assert parsed == []
