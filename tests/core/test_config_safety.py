"""Configuration safety (issue 9, items 9 and 11): secrets never appear in reprs, JSON
dumps or errors; hostile YAML is refused fast; nested defaults; provider errors located."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memoweave import ConfigError, Memory
from memoweave.config import MemoryConfig, validate_providers
from memoweave.config.interpolate import interpolate_string
from memoweave.plugins import load_registry
from memoweave.testing.doubles import HashingEmbedder

SECRET = "sk-live-1234567890abcdef"


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MW_TEST_SECRET", SECRET)
    return SECRET


def test_repr_and_json_dump_mask_provider_secrets(secret_env: str) -> None:
    config = MemoryConfig.from_dict(
        {
            "llm": {"provider": "openai", "config": {"api_key": "${MW_TEST_SECRET}", "model": "m"}},
            "vector_store": {
                "provider": "qdrant",
                "config": {"url": "http://q:6333", "api_key": "k"},
            },
            "embedder": {"provider": "x", "config": {"headers": {"Authorization": "Bearer t0k"}}},
        }
    )
    for text in (repr(config), str(config), config.model_dump_json(), repr(config.llm)):
        assert secret_env not in text and "Bearer t0k" not in text
        assert "**********" in text
    assert config.model_dump()["llm"]["config"]["api_key"] == secret_env  # still usable
    qdrant = validate_providers(config.model_copy(update={"llm": None, "embedder": None}),
                                load_registry())["vector_store"]  # fmt: skip
    assert "'k'" not in repr(qdrant)


@pytest.mark.parametrize(
    "document",
    [
        {"extraction": {"window_messages": "${MW_TEST_SECRET}"}},
        {"extraction": {"strategy": "pre-${MW_TEST_SECRET}"}},
        {"collection_name": ["${MW_TEST_SECRET}"]},
        {"vector_store": {"provider": "qdrant", "config": {"url": "${MW_TEST_SECRET}"}}},
        {"vector_store": {"provider": "qdrant", "config": {"timeout": "${MW_TEST_SECRET}"}}},
    ],
)
def test_a_secret_in_the_wrong_field_is_never_echoed(
    secret_env: str, document: dict[str, object]
) -> None:
    with pytest.raises(ConfigError) as err:
        config = MemoryConfig.from_dict(document)
        validate_providers(config, load_registry())
    shown = f"{err.value} {err.value.details}"
    assert secret_env not in shown
    assert "<${MW_TEST_SECRET}>" in shown


def test_nested_default_interpolation() -> None:
    env = {"B": "bee", "EMPTY": ""}
    assert interpolate_string("${A:-${B}}", env=env) == "bee"
    assert interpolate_string("${A:-${C:-plain}}/x", env=env) == "plain/x"
    assert interpolate_string("${EMPTY:-${B}}}", env=env) == "bee}"
    assert interpolate_string("${B:-${UNSET}}", env=env) == "bee"  # unused default not expanded
    with pytest.raises(ConfigError, match="'UNSET' is not set"):
        interpolate_string("${A:-${UNSET}}", env=env)
    with pytest.raises(ConfigError, match="nest more than"):
        interpolate_string("${A:-" * 20 + "x" + "}" * 20, env=env)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "memoweave.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_billion_laughs_is_refused_at_once(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    path = _write(tmp_path, "\n".join(lines) + "\n")
    start = time.perf_counter()
    with pytest.raises(ConfigError, match="expands to more than"):
        MemoryConfig.from_yaml(path)
    assert time.perf_counter() - start < 5  # was 46 s and 540 MB
    with pytest.raises(ConfigError, match="refers to the node that contains it"):
        MemoryConfig.from_yaml(_write(tmp_path, "a: &x [1, *x]\n"))


def test_duplicate_keys_are_refused_with_both_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, "collection_name: a\nextraction:\n  window_messages: 3\n"
                  "  window_messages: 4\n")  # fmt: skip
    with pytest.raises(ConfigError) as err:
        MemoryConfig.from_yaml(path)
    assert f"{path}:4:" in err.value.message and "first written on line 3" in err.value.message


def test_anchors_and_merge_keys_within_budget_still_work(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "extraction: &x\n  window_messages: 3\nretrieval:\n  candidates: 10\n"
        "vector_store:\n  provider: memory\n  config: {}\n",
    )
    assert MemoryConfig.from_yaml(path).extraction.window_messages == 3


def test_invalid_utf8_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"collection_name: caf\xe9\n")
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        MemoryConfig.from_yaml(path)


def test_errors_inside_a_provider_config_name_file_and_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        f"history_db_path: {tmp_path / 'h.db'}\n"
        "vector_store:\n  provider: qdrant\n  config:\n    mode: edge\n    timeout: soon\n",
    )
    with pytest.raises(ConfigError) as err:
        Memory(str(path), embedder=HashingEmbedder(dims=8))
    assert err.value.message.startswith(f"{path}:6: vector_store.config.timeout:")
