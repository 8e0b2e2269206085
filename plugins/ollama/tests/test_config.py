"""Configuration, host resolution and registration of memoweave-ollama (no server)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from memoweave_ollama.client import normalize_host, resolve_host
from memoweave_ollama.config import OllamaEmbedderConfig, OllamaLLMConfig

from memoweave.errors import ConfigError
from memoweave.plugins import load_registry


@pytest.mark.parametrize(
    ("raw", "url"),
    [
        ("localhost", "http://localhost:11434"),
        ("gpu-box:8080", "http://gpu-box:8080"),
        ("http://example.com", "http://example.com:80"),
        ("https://example.com/ollama/", "https://example.com:443/ollama"),
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("[::1]:5000", "http://[::1]:5000"),
    ],
)
def test_hosts_are_normalised_like_the_ollama_cli(raw: str, url: str) -> None:
    assert normalize_host(raw) == url


def test_bad_hosts_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="unsupported"):
        normalize_host("ftp://x")
    with pytest.raises(ConfigError, match="invalid"):
        normalize_host("host:notaport")


def test_host_resolution_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert resolve_host(OllamaLLMConfig()) == "http://127.0.0.1:11434"
    monkeypatch.setenv("OLLAMA_HOST", "remote:1234")
    assert resolve_host(OllamaLLMConfig()) == "http://remote:1234"
    assert resolve_host(OllamaLLMConfig(host="http://cfg:1")) == "http://cfg:1"


@pytest.mark.parametrize(
    "config",
    [
        {"unknown": 1},
        {"options": {"num_predict": 5}},
        {"host": ""},
        {"timeout": 0},
        {"max_retries": -1},
        {"temperature": 5},
    ],
)
def test_invalid_llm_configs_are_config_errors(config: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        load_registry().create("llm", "ollama", config)


def test_embedder_dims_must_agree_with_dimensions() -> None:
    with pytest.raises(ConfigError, match="contradicts"):
        load_registry().create("embedder", "ollama", {"dims": 384, "dimensions": 128})
    assert OllamaEmbedderConfig(dims=128, dimensions=128).dims == 128


def test_registration_does_no_io_and_no_sdk_import() -> None:
    code = (
        "import sys; from memoweave.plugins import load_registry; r = load_registry(); "
        "i = r.info('llm', 'ollama'); e = r.info('embedder', 'ollama'); "
        "assert i.distribution == 'memoweave-ollama', i; "
        "print('ollama' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_creating_a_provider_does_no_io(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    llm = load_registry().create("llm", "ollama", {"model": "qwen3:8b", "api_key": "k"})
    try:
        assert llm.url == "http://127.0.0.1:11434"
        assert llm.capabilities.json_schema and llm.capabilities.json_object
        assert not llm.capabilities.vision
    finally:
        llm.close()
