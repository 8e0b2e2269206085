"""mem0 configurations, as they are: detection and translation to memoweave's layout.

:func:`translate_mem0` turns a mem0 ``MemoryConfig`` dict (``vector_store`` / ``llm`` /
``embedder`` / ``reranker`` with mem0's provider names and keys, ``history_db_path``,
``version``, ``custom_instructions``...) into a memoweave configuration dict. The mapping
table is in docs/migrating-from-mem0.md. Rules:

- every mem0 key is either translated or refused with a ``ConfigError`` naming the key
  and the alternative; nothing is silently dropped (a key left at mem0's default value,
  e.g. ``on_disk: false``, is accepted);
- memoweave never writes into mem0's data: its collection is ``<collection_name>_memoweave``
  next to mem0's, a local store path gets a ``-memoweave`` sibling and the history a
  ``.memoweave`` sibling file; ``memoweave import --from-mem0`` copies mem0's memories in;
- providers mem0 fills in by default (OpenAI LLM and embedder, Qdrant on ``/tmp/qdrant``)
  are filled in the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memoweave.config.mem0_sections import (
    OPENAI_COMPATIBLE,
    embedder_section,
    llm_section,
    read_section,
    refuse,
    reranker_section,
    sibling,
    vector_store_section,
)

SUFFIX = "_memoweave"
MEM0_TOP_LEVEL = frozenset(
    {
        "vector_store", "llm", "embedder", "reranker", "history_db_path", "version",
        "custom_instructions", "custom_fact_extraction_prompt", "custom_update_memory_prompt",
        "graph_store",
    }
)  # fmt: skip
_SHARED_TOP = frozenset(
    {"vector_store", "llm", "embedder", "reranker", "graph_store", "history_db_path", "version"}
)
_MEM0_ONLY_TOP = MEM0_TOP_LEVEL - _SHARED_TOP
_MEM0_VERSIONS = frozenset({"v1.0", "v1.1"})  # mem0's API versions
_MEM0_CONFIG_KEYS = frozenset(
    {
        "collection_name", "embedding_model_dims", "embedding_dims", "openai_base_url",
        "ollama_base_url", "lmstudio_base_url", "vllm_base_url", "deepseek_base_url",
        "huggingface_base_url", "azure_kwargs", "model_kwargs", "http_client_proxies",
        "enable_embeddings", "metric_type", "on_disk", "enable_vision", "vision_details",
    }
)  # fmt: skip


def looks_like_mem0(mapping: Mapping[str, Any]) -> bool:
    """Whether ``mapping`` is a mem0 configuration rather than a memoweave one: it uses a
    mem0-only top-level key, mem0's ``version`` (v1.0, v1.1: memoweave's format is v1), a
    mem0-only provider name, or a mem0 provider setting."""
    if not isinstance(mapping, Mapping):
        return False
    if set(mapping) & _MEM0_ONLY_TOP or mapping.get("version") in _MEM0_VERSIONS:
        return True
    for kind in ("vector_store", "llm", "embedder", "reranker"):
        section = mapping.get(kind)
        if not isinstance(section, Mapping):
            continue
        provider = section.get("provider")
        if not isinstance(provider, str):
            continue
        if provider in {"upstash_vector", "azure_openai", "huggingface", "sentence_transformer"}:
            return True
        if provider in OPENAI_COMPATIBLE and provider != "openai":
            return True
        config = section.get("config")
        if isinstance(config, Mapping) and set(config) & _MEM0_CONFIG_KEYS:
            return True
    return False


def translate_mem0(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The memoweave configuration dict equivalent to mem0 configuration ``mapping``.

    Raises:
        ConfigError: a key has no memoweave equivalent (the message names it and the hint
            the alternative).
    """
    unknown = sorted(set(mapping) - MEM0_TOP_LEVEL)
    if unknown:
        raise refuse(unknown[0], "is not a mem0 configuration key", "Remove it.")
    if mapping.get("graph_store") is not None:
        raise refuse(
            "graph_store",
            "(mem0's Neo4j / Memgraph / Neptune / Kuzu settings) has no equivalent",
            "Remove it; memoweave links entities in its own index, and an embedded graph "
            "store is a memoweave graph_store section (provider ladybug).",
        )
    if mapping.get("custom_update_memory_prompt") is not None:
        raise refuse(
            "custom_update_memory_prompt",
            "has no equivalent (memoweave's update rules are part of its decide prompt)",
            "Move the rules to custom_instructions (extraction.custom_instructions).",
        )
    store_section = read_section(mapping, "vector_store", {"provider": "qdrant", "config": {}})
    out: dict[str, Any] = {}
    out["vector_store"], collection = vector_store_section(store_section)
    out["collection_name"] = collection + SUFFIX
    embedder = embedder_section(
        read_section(mapping, "embedder", {"provider": "openai", "config": {}}), store_section
    )
    if embedder is not None:
        out["embedder"] = embedder
    out["llm"] = llm_section(read_section(mapping, "llm", {"provider": "openai", "config": {}}))
    if mapping.get("reranker") is not None:
        out["reranker"] = reranker_section(read_section(mapping, "reranker", {}))
    history = mapping.get("history_db_path")
    if history is not None:
        out["history_db_path"] = str(sibling(str(history), ".memoweave", file=True))
    instructions = [
        mapping[k]
        for k in ("custom_fact_extraction_prompt", "custom_instructions")
        if mapping.get(k) is not None
    ]
    if instructions:
        out["extraction"] = {"custom_instructions": "\n\n".join(map(str, instructions))}
    return out
