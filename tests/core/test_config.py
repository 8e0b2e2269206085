"""Configuration: YAML loading, interpolation, located errors, provider validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoweave.config import MemoryConfig, ProviderSpec, validate_providers
from memoweave.errors import ConfigError, ProviderNotFound
from memoweave.plugins import load_registry
from memoweave.stores.memory_config import InMemoryStoreConfig


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "memoweave.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults() -> None:
    config = MemoryConfig()
    assert config.vector_store is None  # the embedded default, chosen by Memory
    assert (config.embedder, config.llm, config.reranker) == (None, None, None)
    assert (config.collection_name, config.version, config.history_db_path) == (
        "memoweave",
        "v1",
        None,
    )
    assert config.source is None
    assert list(config.provider_specs()) == []


def test_yaml_with_interpolation_default_and_escape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MW_DATA", "/srv/mw")
    monkeypatch.delenv("MW_UNSET", raising=False)
    monkeypatch.setenv("MW_EMPTY", "")
    path = write(
        tmp_path,
        """
vector_store:
  provider: memory
  config:
    path: ${MW_DATA}/vectors
embedder:
  provider: ${MW_UNSET:-onnx}
  config: {prompt: "cost is $${PRICE}", dims: 384, label: "${MW_EMPTY:-fallback}"}
history_db_path: ${MW_DATA}/history.db
collection_name: notes
""",
    )
    config = MemoryConfig.from_yaml(path)
    assert config.source == str(path)
    assert config.vector_store.config == {"path": "/srv/mw/vectors"}
    assert config.embedder == ProviderSpec(
        provider="onnx", config={"prompt": "cost is ${PRICE}", "dims": 384, "label": "fallback"}
    )
    assert config.history_db_path == "/srv/mw/history.db"
    assert config.collection_name == "notes"


def test_missing_variable_names_it_path_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MW_QDRANT_URL", raising=False)
    path = write(
        tmp_path, "vector_store:\n  provider: qdrant\n  config:\n    url: ${MW_QDRANT_URL}\n"
    )
    with pytest.raises(ConfigError) as err:
        MemoryConfig.from_yaml(path)
    assert err.value.message == (
        f"{path}:4: vector_store.config.url: environment variable 'MW_QDRANT_URL' is not set"
    )
    assert err.value.details["path"] == "vector_store.config.url"
    assert "${VAR:-default}" in err.value.hint


@pytest.mark.parametrize(
    ("value", "reason"),
    [("${1BAD}", "invalid interpolation '${1BAD}'"), ("${OPEN", "unterminated '${'")],
)
def test_malformed_interpolation_is_rejected(value: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=r"^collection_name: " + reason.replace("$", r"\$")):
        MemoryConfig.from_dict({"collection_name": value})


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "vector_store:\n  provider: memory\n config: [1, 2\n")
    with pytest.raises(ConfigError, match=rf"^{path}:3:\d+: invalid YAML: ") as err:
        MemoryConfig.from_yaml(path)
    assert err.value.details["line"] == 3


def test_missing_file_and_non_mapping_top_level(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read configuration file"):
        MemoryConfig.from_yaml(tmp_path / "absent.yaml")
    with pytest.raises(ConfigError, match="top level must be a mapping, got list"):
        MemoryConfig.from_yaml(write(tmp_path, "- a\n- b\n"))
    assert MemoryConfig.from_yaml(write(tmp_path, "")).model_dump() == MemoryConfig().model_dump()


def test_bad_field_names_dotted_path_file_line_and_reason(tmp_path: Path) -> None:
    path = write(tmp_path, "vector_store:\n  provider: memory\nllm:\n  provider: [openai]\n")
    with pytest.raises(ConfigError) as err:
        MemoryConfig.from_yaml(path)
    assert err.value.message.startswith(
        f"{path}:4: llm.provider: Input should be a valid string (got ['openai'])"
    )
    assert (err.value.details["file"], err.value.details["line"]) == (str(path), 4)


def test_unknown_field_suggests_the_close_one() -> None:
    with pytest.raises(ConfigError) as err:
        MemoryConfig.from_dict({"colection_name": "x"}, source="inline")
    assert err.value.message == (
        "inline: colection_name: unknown field (allowed: collection_name, embedder, extraction, "
        "graph_store, history_db_path, late_interaction, limits, llm, reranker, retrieval, "
        "server, vector_store, version); "
        "did you mean 'collection_name'?"
    )


def test_another_format_version_is_refused(tmp_path: Path) -> None:
    assert MemoryConfig.from_yaml(write(tmp_path, "version: v1\n")).version == "v1"
    with pytest.raises(ConfigError) as err:
        MemoryConfig.from_yaml(write(tmp_path, "collection_name: x\nversion: v2\n"))
    assert err.value.message.startswith(f"{tmp_path / 'memoweave.yaml'}:2: version: ")
    assert "'v1'" in err.value.message


def test_several_errors_are_all_kept_in_details() -> None:
    with pytest.raises(ConfigError, match=r"\(and 1 more: llm\.config\)") as err:
        MemoryConfig.from_dict({"vector_store": {}, "llm": {"provider": "x", "config": 3}})
    assert [e["path"] for e in err.value.details["errors"]] == [
        "vector_store.provider",
        "llm.config",
    ]


def test_direct_construction_raises_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^provider: required field is missing"):
        ProviderSpec()  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match="expected a mapping, got str"):
        MemoryConfig.from_dict("vector_store: memory")  # type: ignore[arg-type]


def test_validate_providers_checks_provider_config_against_the_plugin_model(
    tmp_path: Path,
) -> None:
    registry = load_registry(autoload=False)
    good = MemoryConfig.from_dict({"vector_store": {"provider": "memory", "config": {}}})
    [(kind, model)] = validate_providers(good, registry).items()
    assert kind == "vector_store"
    assert model == InMemoryStoreConfig()

    path = write(tmp_path, "vector_store:\n  provider: memory\n  config:\n    uri: /tmp/x\n")
    with pytest.raises(ConfigError) as err:
        validate_providers(MemoryConfig.from_yaml(path), registry)
    assert err.value.message.startswith(
        f"{path}:4: vector_store.config.uri: unknown field (allowed: path)"
    )


def test_validate_providers_unknown_provider_is_located(tmp_path: Path) -> None:
    registry = load_registry(autoload=False)
    path = write(tmp_path, "collection_name: a\nvector_store:\n  provider: memroy\n")
    with pytest.raises(ProviderNotFound) as err:
        validate_providers(MemoryConfig.from_yaml(path), registry)
    assert err.value.message.startswith(
        f"{path}:3: vector_store.provider: no vector_store provider named 'memroy'"
    )
    assert "did you mean 'memory'?" in err.value.message
    assert "pip install memoweave-memroy" in err.value.hint
