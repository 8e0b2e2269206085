"""The provider registry: lookup, config validation, construction, conflicts, bad plugins."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from memoweave import hookimpl
from memoweave.errors import (
    ConfigError,
    DuplicateProviderError,
    PluginError,
    ProviderNotFound,
    RerankerError,
    ValidationError,
)
from memoweave.plugins import (
    PluginLoadWarning,
    ProviderRegistry,
    get_plugin_manager,
    load_registry,
)
from memoweave.providers import Reranker, VectorStore
from memoweave.stores.memory_config import InMemoryStoreConfig

PLUGIN_SITE = Path(__file__).resolve().parents[1] / "fixtures" / "plugin_site"


@pytest.fixture
def plugin_site(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put the fixture distributions on sys.path with no plugin env vars set."""
    monkeypatch.delenv("MEMOWEAVE_PLUGINS", raising=False)
    monkeypatch.delenv("MEMOWEAVE_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.syspath_prepend(str(PLUGIN_SITE))
    return PLUGIN_SITE


@pytest.fixture
def overlap_registry(plugin_site: Path) -> ProviderRegistry:
    return load_registry(allow=["overlap"])


def test_builtin_memory_store_is_registered_by_memoweave() -> None:
    registry = load_registry(autoload=False)
    info = registry.info("vector_store", "memory")
    assert (info.distribution, info.plugin) == ("memoweave", "memoweave.plugins.builtins")
    assert info.config_model is InMemoryStoreConfig
    assert set(info.config_schema()["properties"]) == {"path"}
    assert [i.name for i in registry.list("vector_store")] == ["memory"]
    store = registry.create("vector_store", "memory")
    assert isinstance(store, VectorStore)
    store.close()


def test_external_provider_is_built_from_a_config_mapping(
    overlap_registry: ProviderRegistry,
) -> None:
    info = overlap_registry.info("reranker", "overlap")
    assert (info.distribution, info.version, info.plugin) == (
        "memoweave-fixture-overlap",
        "1.2.0",
        "overlap",
    )
    assert info.description == "Word overlap."
    reranker = overlap_registry.create("reranker", "overlap", {"lowercase": False})
    assert isinstance(reranker, Reranker)
    ranked = reranker.rerank("red Fox", ["the red fox", "red Fox jumps", "blue"], top_k=2)
    assert [(r.index, r.score) for r in ranked] == [(1, 2.0), (0, 1.0)]


def test_config_model_instance_is_used_as_is(overlap_registry: ProviderRegistry) -> None:
    model = overlap_registry.info("reranker", "overlap").config_model
    config = model(min_score=2)
    assert overlap_registry.validate_config("reranker", "overlap", config) is config
    ranked = overlap_registry.create("reranker", "overlap", config).rerank(
        "a b", ["a", "a b"], top_k=5
    )
    assert [r.index for r in ranked] == [1]


def test_bad_config_field_names_the_dotted_path(overlap_registry: ProviderRegistry) -> None:
    with pytest.raises(ConfigError) as err:
        overlap_registry.create("reranker", "overlap", {"min_score": "high"})
    assert err.value.details["path"] == "reranker.config.min_score"
    assert err.value.message.startswith("reranker.config.min_score: Input should be a valid number")
    with pytest.raises(
        ConfigError, match=r"reranker\.config\.lowercse: unknown field .*'lowercase'"
    ):
        overlap_registry.create("reranker", "overlap", {"lowercse": True})
    with pytest.raises(ConfigError, match="expected a mapping or a OverlapConfig, got list"):
        overlap_registry.create("reranker", "overlap", ["lowercase"])


def test_unknown_provider_lists_installed_suggests_and_names_the_package(
    overlap_registry: ProviderRegistry,
) -> None:
    with pytest.raises(ProviderNotFound) as err:
        overlap_registry.create("reranker", "overlapp")
    message = err.value.message
    assert "no reranker provider named 'overlapp'" in message
    assert "installed: explode, notareranker, overlap" in message
    assert "did you mean 'overlap'?" in message
    assert "pip install memoweave-overlapp" in err.value.hint
    assert err.value.details["suggestions"] == ["overlap"]


def test_unknown_kind_and_bad_name_are_validation_errors(
    overlap_registry: ProviderRegistry,
) -> None:
    with pytest.raises(ValidationError, match="unknown provider kind 'rerankers'"):
        overlap_registry.create("rerankers", "overlap")
    with pytest.raises(ValidationError, match="non-empty string"):
        overlap_registry.info("reranker", None)  # type: ignore[arg-type]


def test_factory_failure_is_wrapped_in_the_kind_error(overlap_registry: ProviderRegistry) -> None:
    with pytest.raises(RerankerError, match="model file is corrupt") as err:
        overlap_registry.create("reranker", "explode")
    assert "memoweave-fixture-overlap 1.2.0" in err.value.message
    assert isinstance(err.value.__cause__, RuntimeError)


def test_factory_returning_the_wrong_type_is_a_plugin_error(
    overlap_registry: ProviderRegistry,
) -> None:
    with pytest.raises(PluginError, match="returned object, not a Reranker"):
        overlap_registry.create("reranker", "notareranker")


def test_duplicate_name_is_recorded_and_unusable_while_the_rest_works(plugin_site: Path) -> None:
    with pytest.warns(PluginLoadWarning, match="registered by both"):
        registry = load_registry(allow=["overlap", "dup"])
    [conflict] = registry.conflicts
    assert (conflict.kind, conflict.name) == ("reranker", "overlap")
    with pytest.raises(DuplicateProviderError) as err:
        registry.create("reranker", "overlap")
    assert "memoweave-fixture-overlap 1.2.0" in err.value.message
    assert "memoweave-fixture-dup 2.0.0" in err.value.message
    assert err.value.details["distributions"] == [
        "memoweave-fixture-overlap",
        "memoweave-fixture-dup",
    ]
    assert registry.info("reranker", "solo").distribution == "memoweave-fixture-dup"
    assert [i.distribution for i in registry.list("reranker") if i.name == "overlap"] == [
        "memoweave-fixture-overlap",
        "memoweave-fixture-dup",
    ]


@pytest.mark.parametrize(
    ("entry_point", "reason"),
    [
        ("badname", "invalid embedder provider 'Bad Name': the name must match"),
        ("notcallable", "invalid llm provider 'notcallable': the factory must be callable"),
    ],
)
def test_invalid_registration_skips_the_whole_plugin(
    plugin_site: Path, entry_point: str, reason: str
) -> None:
    with pytest.warns(PluginLoadWarning, match="memoweave-fixture-badreg 0.6.0"):
        registry = load_registry(allow=[entry_point, "overlap"])
    [failure] = registry.failures
    assert (failure.plugin, failure.distribution) == (entry_point, "memoweave-fixture-badreg")
    assert failure.error.startswith(reason)
    assert all(i.distribution != "memoweave-fixture-badreg" for i in registry.list())
    assert registry.info("reranker", "overlap").distribution == "memoweave-fixture-overlap"


class _NotAModel:
    pass


class _PlainModel(BaseModel):
    pass


def test_register_raises_plugin_error_naming_the_plugin() -> None:
    raised: list[PluginError] = []

    class InProcessPlugin:
        @staticmethod
        @hookimpl
        def register_rerankers(register):
            register("fine", Reranker, config_model=_PlainModel)
            try:
                register("broken", Reranker, config_model=_NotAModel)
            except PluginError as exc:
                raised.append(exc)
                raise

    pm = get_plugin_manager(autoload=False)
    pm.register(InProcessPlugin, name="inproc")
    with pytest.warns(PluginLoadWarning, match="inproc"):
        registry = ProviderRegistry.from_plugin_manager(pm)
    [error] = raised
    assert "(plugin 'inproc')" in error.message
    assert "config_model must be a pydantic BaseModel subclass" in error.message
    assert registry.names("reranker") == []  # "fine" is dropped with the rest of the plugin
    assert registry.names("vector_store") == ["memory"]
