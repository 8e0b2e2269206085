"""Server-side embeddings (``embeddings: server``, mem0's ``enable_embeddings``): the index
embeds the memory text; memoweave sends text and runs no embedder. Tested on the emulator's
deterministic built-in embedding model, through the real upstash-vector SDK."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from memoweave_upstash.emulator import UpstashEmulator
from memoweave_upstash.emulator.store import BUILTIN_MODEL, builtin_embedding

from memoweave import Memory
from memoweave.errors import ConfigError, ValidationError, VectorStoreError
from memoweave.plugins import load_registry
from memoweave.providers.store_embedder import StoreEmbedder
from memoweave.providers.vector_store import EmbedText, VectorRecord


@pytest.fixture
def upstash_embedding_emu() -> Iterator[UpstashEmulator]:
    with UpstashEmulator(dims=32, metric="cosine", embedding_model=BUILTIN_MODEL) as emu:
        yield emu


def _config(emu: UpstashEmulator, tmp_path: Path, **extra: object) -> dict[str, object]:
    return {
        "vector_store": {
            "provider": "upstash",
            "config": {"url": emu.url, "token": emu.token, "embeddings": "server"},
        },
        "history_db_path": str(tmp_path / "history.db"),
        **extra,
    }


def test_memory_sends_text_and_skips_the_embedder(
    upstash_embedding_emu: UpstashEmulator, tmp_path: Path
) -> None:
    with Memory(_config(upstash_embedding_emu, tmp_path)) as memory:
        assert isinstance(memory._providers.embedder, StoreEmbedder)
        for text in ("I live in Berlin", "I play the cello", "My sister is called Ana"):
            memory.add(text, user_id="maya", infer=False)
        hits = memory.search("which city do I live in", user_id="maya", top_k=2)["results"]
        assert hits[0]["memory"] == "I live in Berlin"
        updated = memory.update(hits[0]["id"], text="I live in Lisbon now")
        assert updated["memory"] == "I live in Lisbon now"
        again = memory.search("Lisbon", user_id="maya", top_k=1)["results"]
        assert again[0]["id"] == hits[0]["id"]
    requests = upstash_embedding_emu.requests
    assert "upsert-data" in requests and "query-data" in requests
    stored = upstash_embedding_emu.index.fetch(
        "memoweave", {"ids": [hits[0]["id"]], "includeVectors": True}
    )[0]
    assert stored["vector"] == pytest.approx(builtin_embedding("I live in Lisbon now", 32))


def test_an_embedder_next_to_server_embeddings_is_a_config_error(
    upstash_embedding_emu: UpstashEmulator, tmp_path: Path
) -> None:
    config = _config(upstash_embedding_emu, tmp_path, embedder={"provider": "onnx"})
    with pytest.raises(ConfigError, match="embeds the memory text itself") as caught:
        Memory(config)
    assert "embedder" in caught.value.hint


def test_server_embeddings_need_an_index_with_a_model(tmp_path: Path) -> None:
    with UpstashEmulator(dims=8) as emu:
        store = load_registry().create(
            "vector_store", "upstash", {"url": emu.url, "token": emu.token, "embeddings": "server"}
        )
        with pytest.raises(VectorStoreError, match="no embedding model"):
            store.ensure_collection("c", 8)
        store.close()


def test_text_is_refused_by_a_client_side_store(upstash_emu: UpstashEmulator) -> None:
    store = load_registry().create(
        "vector_store", "upstash", {"url": upstash_emu.url, "token": upstash_emu.token}
    )
    store.ensure_collection("c", 8)
    with pytest.raises(ValidationError, match="does not embed text"):
        store.upsert([VectorRecord("00000000-0000-0000-0000-000000000001", EmbedText("hi"), {})])
    with pytest.raises(ValidationError, match="does not embed text"):
        store.search(EmbedText("hi"))
    store.close()


def test_mem0_enable_embeddings_translates_to_server_embeddings(
    upstash_embedding_emu: UpstashEmulator, tmp_path: Path
) -> None:
    mem0 = {
        "vector_store": {
            "provider": "upstash_vector",
            "config": {
                "url": upstash_embedding_emu.url,
                "token": upstash_embedding_emu.token,
                "collection_name": "app",
                "enable_embeddings": True,
            },
        },
        "llm": {"provider": "openai", "config": {"openai_base_url": "http://127.0.0.1:9/v1"}},
        "history_db_path": str(tmp_path / "history.db"),
    }
    with Memory.from_config(mem0) as memory:
        assert memory.config.collection_name == "app_memoweave"
        memory.add("I like green tea", user_id="u", infer=False)
        assert memory.search("tea", user_id="u")["results"][0]["memory"] == "I like green tea"
    assert upstash_embedding_emu.index.info()["namespaces"]["app_memoweave"]["vectorCount"] == 1
