"""mem0 configurations, as they are: detection, translation to memoweave's layout, and the
typed errors for what has no equivalent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memoweave.config import MemoryConfig
from memoweave.config.mem0 import looks_like_mem0, translate_mem0
from memoweave.errors import ConfigError


def _llm(provider: str, **config: Any) -> dict[str, Any]:
    return translate_mem0({"llm": {"provider": provider, "config": config}})["llm"]


def _embedder(provider: str, **config: Any) -> dict[str, Any]:
    return translate_mem0({"embedder": {"provider": provider, "config": config}})["embedder"]


def _store(provider: str, **config: Any) -> dict[str, Any]:
    return translate_mem0({"vector_store": {"provider": provider, "config": config}})


def test_detection() -> None:
    assert looks_like_mem0({"custom_instructions": "x"})
    assert looks_like_mem0({"vector_store": {"provider": "upstash_vector"}})
    assert looks_like_mem0(
        {"vector_store": {"provider": "qdrant", "config": {"collection_name": "a"}}}
    )
    assert looks_like_mem0({"llm": {"provider": "vllm", "config": {}}})
    assert looks_like_mem0({"version": "v1.1"}) and not looks_like_mem0({"version": "v1"})
    assert looks_like_mem0({"embedder": {"provider": "openai", "config": {"embedding_dims": 8}}})
    assert not looks_like_mem0({"vector_store": {"provider": "qdrant", "config": {"path": "/x"}}})
    assert not looks_like_mem0({"llm": {"provider": "openai", "config": {"base_url": "http://a"}}})


def test_defaults_follow_mem0() -> None:
    out = translate_mem0({"version": "v1.1"})
    assert out["vector_store"] == {
        "provider": "qdrant",
        "config": {"mode": "edge", "path": "/tmp/qdrant-memoweave"},
    }
    assert out["collection_name"] == "mem0_memoweave"
    assert out["llm"] == {"provider": "openai", "config": {"model": "gpt-5-mini"}}
    assert out["embedder"]["config"] == {"model": "text-embedding-3-small"}
    assert "version" not in out  # mem0's API version; memoweave's own is its file format


@pytest.mark.parametrize(
    ("provider", "config", "expected"),
    [
        ("openai", {"model": "gpt-4.1", "openai_base_url": "http://h/v1", "api_key": "k"},
         {"base_url": "http://h/v1", "api_key": "k", "model": "gpt-4.1"}),
        ("vllm", {"model": "qwen", "vllm_base_url": "http://gpu:8000/v1", "top_k": 20},
         {"base_url": "http://gpu:8000/v1", "model": "qwen", "extra_body": {"top_k": 20}}),
        ("lmstudio", {"model": "m"}, {"base_url": "http://localhost:1234/v1", "model": "m"}),
        ("deepseek", {"model": "deepseek-chat"},
         {"base_url": "https://api.deepseek.com", "api_key": "${DEEPSEEK_API_KEY}",
          "model": "deepseek-chat"}),
        ("groq", {"model": "llama"},
         {"base_url": "https://api.groq.com/openai/v1", "api_key": "${GROQ_API_KEY}",
          "model": "llama"}),
        ("azure_openai", {"model": "gpt-4o", "azure_kwargs": {
            "azure_deployment": "dep", "azure_endpoint": "https://x.openai.azure.com",
            "api_version": "2024-10-21", "api_key": "az"}},
         {"azure_deployment": "dep", "azure_endpoint": "https://x.openai.azure.com",
          "api_version": "2024-10-21", "api_key": "az", "model": "gpt-4o"}),
    ],
)  # fmt: skip
def test_openai_compatible_llms(provider: str, config: dict[str, Any], expected: Any) -> None:
    assert _llm(provider, **config) == {"provider": "openai", "config": expected}


def test_ollama_llm_and_sampling() -> None:
    out = _llm("ollama", model="qwen3", ollama_base_url="http://box:11434", temperature=0.1,
               top_p=0.9, top_k=40, max_tokens=500)  # fmt: skip
    assert out == {
        "provider": "ollama",
        "config": {"host": "http://box:11434", "model": "qwen3", "temperature": 0.1,
                   "max_tokens": 500, "options": {"top_p": 0.9, "top_k": 40}},
    }  # fmt: skip
    assert _llm("openai", top_p=0.1, top_k=1)["config"]["extra_body"] == {"top_p": 0.1}


def test_embedders(tmp_path: Path) -> None:
    assert _embedder("openai", model="text-embedding-3-large", embedding_dims=256)["config"] == {
        "model": "text-embedding-3-large",
        "dimensions": 256,
    }
    assert _embedder("ollama", model="nomic", ollama_base_url="http://o:1", embedding_dims=768) == {
        "provider": "ollama",
        "config": {"host": "http://o:1", "model": "nomic", "dims": 768},
    }
    local = _embedder("huggingface", model=str(tmp_path), model_kwargs={"device": "cpu"})
    assert local == {
        "provider": "sentence-transformers",
        "config": {"model": str(tmp_path), "device": "cpu"},
    }
    packaged = _embedder("huggingface", model="sentence-transformers/all-MiniLM-L6-v2")
    assert packaged == {"provider": "sentence-transformers", "config": {}}
    tei = _embedder("huggingface", huggingface_base_url="http://tei:80/v1")
    assert tei == {"provider": "openai", "config": {"base_url": "http://tei:80/v1", "model": "tei"}}


def test_stores_never_share_mem0s_data() -> None:
    server = _store("qdrant", host="q", port=6334, api_key="k", collection_name="app")
    assert server["vector_store"]["config"] == {
        "mode": "server",
        "url": "http://q:6334",
        "api_key": "k",
    }
    assert server["collection_name"] == "app_memoweave"
    lite = _store("milvus", url="./data/milvus.db", metric_type="L2", embedding_model_dims=384)
    assert lite["vector_store"] == {
        "provider": "milvus",
        "config": {"uri": str(Path("data/milvus.memoweave.db"))},
    }
    remote = _store("milvus", url="http://m:19530", token="t", db_name="d")
    assert remote["vector_store"]["config"] == {
        "uri": "http://m:19530",
        "token": "t",
        "db_name": "d",
    }
    upstash = _store("upstash_vector", url="https://u.io", token="t", collection_name="ns")
    assert upstash["vector_store"] == {
        "provider": "upstash",
        "config": {"url": "https://u.io", "token": "t"},
    }
    assert upstash["collection_name"] == "ns_memoweave"
    assert translate_mem0({"history_db_path": "/d/history.db"})["history_db_path"] == (
        "/d/history.memoweave.db"
    )


def test_prompts() -> None:
    out = translate_mem0({"custom_fact_extraction_prompt": "A", "custom_instructions": "B"})
    assert out["extraction"] == {"custom_instructions": "A\n\nB"}


@pytest.mark.parametrize(
    ("config", "path", "hint"),
    [
        ({"graph_store": {"provider": "neo4j"}, "version": "v1.1"}, "graph_store", "ladybug"),
        ({"custom_update_memory_prompt": "x"}, "custom_update_memory_prompt", "instructions"),
        ({"vector_store": {"provider": "chroma", "config": {}}}, "vector_store.provider", "qdrant"),
        ({"vector_store": {"provider": "qdrant", "config": {"on_disk": True}}},
         "vector_store.config.on_disk", "Remove"),
        ({"vector_store": {"provider": "qdrant", "config": {"client": object()}}},
         "vector_store.config.client", "url"),
        ({"llm": {"provider": "anthropic", "config": {}}}, "llm.provider", "OpenAI-compatible"),
        ({"llm": {"provider": "openai", "config": {"http_client_proxies": "p"}}},
         "llm.config.http_client_proxies", "HTTPS_PROXY"),
        ({"llm": {"provider": "openai", "config": {"top_k": 5}}}, "llm.config.top_k", "Remove"),
        ({"llm": {"provider": "openai", "config": {"colour": 1}}}, "llm.config.colour", "Remove"),
        ({"embedder": {"provider": "gemini", "config": {}}}, "embedder.provider", "ollama"),
        ({"embedder": {"provider": "huggingface", "config": {"model_kwargs": {"x": 1}}}},
         "embedder.config.model_kwargs.x", "device"),
        ({"reranker": {"provider": "cohere", "config": {}}}, "reranker.provider", "cross-encoder"),
        ({"surprise": 1, "version": "v1.1"}, "surprise", "Remove"),
    ],
)  # fmt: skip
def test_what_has_no_equivalent_is_a_named_error(
    config: dict[str, Any], path: str, hint: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        translate_mem0(config)
    assert caught.value.details["path"] == path
    assert path in caught.value.message and hint in caught.value.hint


def test_memory_config_translates_mem0_dicts_and_yaml(tmp_path: Path) -> None:
    mem0 = {
        "vector_store": {"provider": "qdrant", "config": {"collection_name": "c", "path": "/p"}},
        "embedder": {"provider": "ollama", "config": {"model": "nomic-embed-text"}},
        "llm": {"provider": "ollama", "config": {"model": "llama3.2"}},
    }
    config = MemoryConfig.from_dict(mem0)
    assert config.collection_name == "c_memoweave"
    assert config.vector_store is not None and config.vector_store.config["path"] == "/p-memoweave"
    file = tmp_path / "mem0.yaml"
    file.write_text(
        "llm:\n  provider: anthropic\n  config: {}\nversion: v1.1\ncustom_instructions: x\n"
    )
    with pytest.raises(ConfigError) as caught:
        MemoryConfig.from_yaml(file)
    assert str(file) in caught.value.message and "llm.provider" in caught.value.message


def test_a_memoweave_graph_store_section_is_not_mem0() -> None:
    assert not looks_like_mem0({"graph_store": {"provider": "ladybug", "config": {}}})
