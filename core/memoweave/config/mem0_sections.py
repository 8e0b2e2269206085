"""mem0's configuration sections, one translator each (``vector_store``, ``llm``,
``embedder``, ``reranker``: mem0's provider names and keys in, memoweave's out), and the
refusal every untranslatable key gets. The rules are in :mod:`memoweave.config.mem0`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from memoweave.config.diagnostics import config_error

OPENAI_COMPATIBLE: dict[str, tuple[str | None, str | None, str | None]] = {
    # provider: (base-url key in mem0's config, default base URL, api-key environment variable)
    "openai": ("openai_base_url", None, None),
    "openai_structured": ("openai_base_url", None, None),
    "lmstudio": ("lmstudio_base_url", "http://localhost:1234/v1", None),
    "vllm": ("vllm_base_url", "http://localhost:8000/v1", None),
    "deepseek": ("deepseek_base_url", "https://api.deepseek.com", "DEEPSEEK_API_KEY"),
    "groq": (None, "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "together": (None, "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "xai": ("xai_base_url", "https://api.x.ai/v1", "XAI_API_KEY"),
}
_MINILM = frozenset(
    {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
)  # the packaged weights
_UNSUPPORTED_HINT = (
    "memoweave has plugins for qdrant, milvus and upstash_vector stores and for OpenAI-"
    "compatible, Azure OpenAI, Ollama and local sentence-transformers models; see "
    "docs/migrating-from-mem0.md"
)


def refuse(path: str, reason: str, hint: str) -> Exception:
    """The ``ConfigError`` for mem0 key ``path``: ``reason`` says why, ``hint`` what to do."""
    return config_error(f"mem0 key {path} {reason}", path=path, hint=hint)


def read_section(mapping: Mapping[str, Any], kind: str, default: dict[str, Any]) -> dict[str, Any]:
    """Section ``kind`` as ``{provider, config}`` (``default`` when absent); a wrong shape
    or an extra key is refused."""
    section = mapping.get(kind)
    if section is None:
        return dict(default)
    if not isinstance(section, Mapping) or not isinstance(section.get("provider", ""), str):
        raise refuse(kind, "must be {provider: ..., config: {...}}", "Fix the section shape.")
    config = section.get("config") or {}
    if not isinstance(config, Mapping):
        raise refuse(f"{kind}.config", "must be a mapping", "Write config: {key: value}.")
    extra = sorted(set(section) - {"provider", "config"})
    if extra:
        raise refuse(f"{kind}.{extra[0]}", "is not a mem0 key", "Remove it.")
    return {"provider": section.get("provider") or default.get("provider"), "config": dict(config)}


class _Keys:
    """Consumes a provider's mem0 keys; :meth:`done` refuses whatever was not consumed."""

    def __init__(self, kind: str, config: Mapping[str, Any]) -> None:
        self.kind = kind
        self.left = dict(config)

    def take(self, key: str, default: Any = None) -> Any:
        return self.left.pop(key, default)

    def move(self, key: str, target: dict[str, Any], name: str | None = None) -> None:
        """Consume ``key``; a value that is set goes to ``target[name or key]``."""
        value = self.take(key)
        if value not in (None, ""):
            target[name or key] = value

    def accept_default(self, key: str, default: Any) -> None:
        """Accept ``key`` only at mem0's default value (which memoweave also implies)."""
        if key in self.left and self.left[key] != default:
            raise refuse(
                f"{self.kind}.config.{key}",
                f"= {self.left[key]!r} has no memoweave equivalent",
                f"Remove it (or set it to {default!r}).",
            )
        self.left.pop(key, None)

    def done(self, alternatives: Mapping[str, str] | None = None) -> None:
        for key in sorted(self.left):
            hint = (alternatives or {}).get(key, "Remove it; see docs/migrating-from-mem0.md.")
            raise refuse(f"{self.kind}.config.{key}", "has no memoweave equivalent", hint)


def sibling(path: str, tag: str, *, file: bool = False) -> Path:
    """A path next to ``path``: ``/a/h.db`` -> ``/a/h.memoweave.db`` (``file``), else
    ``/tmp/qdrant`` -> ``/tmp/qdrant-memoweave``."""
    where = Path(path).expanduser()
    if file and where.suffix:
        return where.with_name(f"{where.stem}{tag}{where.suffix}")
    return where.with_name(where.name + tag)


def vector_store_section(section: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The memoweave vector_store section and mem0's collection name."""
    provider, keys = section["provider"], _Keys("vector_store", section["config"])
    collection = str(keys.take("collection_name", "mem0"))
    keys.take("embedding_model_dims")  # memoweave sizes the collection from the embedder
    builders: dict[str, Callable[[_Keys], dict[str, Any]]] = {
        "qdrant": _qdrant,
        "milvus": _milvus,
        "upstash_vector": _upstash,
    }
    build = builders.get(provider)
    if build is None:
        raise refuse(
            "vector_store.provider", f"{provider!r} has no memoweave plugin", _UNSUPPORTED_HINT
        )
    return build(keys), collection


def _no_client(keys: _Keys, alternative: str) -> None:
    if keys.take("client") is not None:
        raise refuse(f"{keys.kind}.config.client", "is a live client object", alternative)


def _qdrant(keys: _Keys) -> dict[str, Any]:
    _no_client(keys, "Pass url (and api_key) or path instead of a client instance.")
    keys.accept_default("on_disk", False)
    url, host, port = keys.take("url"), keys.take("host"), keys.take("port")
    api_key, https = keys.take("api_key"), keys.take("https")
    path = keys.take("path", "/tmp/qdrant")
    keys.done()
    if url or (host and port) or api_key:
        if not url:
            scheme = "https" if https else "http"
            url = f"{scheme}://{host or 'localhost'}:{port or 6333}"
        config: dict[str, Any] = {"mode": "server", "url": url}
        if api_key:
            config["api_key"] = api_key
        return {"provider": "qdrant", "config": config}
    return {
        "provider": "qdrant",
        "config": {"mode": "edge", "path": str(sibling(path, "-memoweave"))},
    }


def _milvus(keys: _Keys) -> dict[str, Any]:
    url = str(keys.take("url", "http://localhost:19530"))
    token, db_name = keys.take("token"), keys.take("db_name")
    keys.take("metric_type")  # memoweave collections are cosine; it matters only to read mem0's
    keys.done()
    if url.endswith(".db"):
        return {
            "provider": "milvus",
            "config": {"uri": str(sibling(url, ".memoweave", file=True))},
        }
    config: dict[str, Any] = {"uri": url}
    if token:
        config["token"] = token
    if db_name:
        config["db_name"] = db_name
    return {"provider": "milvus", "config": config}


def _upstash(keys: _Keys) -> dict[str, Any]:
    _no_client(keys, "Pass url and token (or UPSTASH_VECTOR_REST_URL/TOKEN) instead.")
    config: dict[str, Any] = {}
    keys.move("url", config)
    keys.move("token", config)
    if keys.take("enable_embeddings", False):
        config["embeddings"] = "server"
    keys.done()
    return {"provider": "upstash", "config": config}


def _base_url(keys: _Keys, provider: str) -> dict[str, Any]:
    """``base_url`` / ``api_key`` for an OpenAI-compatible provider of mem0."""
    url_key, default_url, key_env = OPENAI_COMPATIBLE[provider]
    out: dict[str, Any] = {}
    url = keys.take(url_key) if url_key else None
    if url or default_url:
        out["base_url"] = url or default_url
    api_key = keys.take("api_key")
    if api_key:
        out["api_key"] = api_key
    elif key_env:
        out["api_key"] = "${" + key_env + "}"
    return out


def _azure(keys: _Keys) -> dict[str, Any]:
    azure = dict(keys.take("azure_kwargs") or {})
    out: dict[str, Any] = {}
    for mem0_key, ours in (
        ("azure_endpoint", "azure_endpoint"),
        ("azure_deployment", "azure_deployment"),
        ("api_version", "api_version"),
        ("api_key", "api_key"),
        ("default_headers", "default_headers"),
    ):
        if azure.get(mem0_key) is not None:
            out[ours] = azure.pop(mem0_key)
    if azure:
        raise refuse(
            f"{keys.kind}.config.azure_kwargs.{sorted(azure)[0]}",
            "has no memoweave equivalent",
            "Use azure_endpoint, azure_deployment, api_version, api_key, default_headers.",
        )
    if "api_key" in out:
        keys.take("api_key")
    keys.move("api_key", out)
    return out


_COMMON_REFUSALS = {
    "http_client_proxies": "Set the HTTPS_PROXY environment variable instead.",
    "response_callback": "Wrap the provider instead; memoweave has no response callback.",
    "models": "OpenRouter routing has no equivalent: set base_url to OpenRouter and one model.",
    "route": "OpenRouter routing has no equivalent: set base_url to OpenRouter and one model.",
}


def llm_section(section: dict[str, Any]) -> dict[str, Any]:
    """The memoweave llm section (OpenAI-compatible, Azure or Ollama)."""
    provider, keys = section["provider"], _Keys("llm", section["config"])
    config: dict[str, Any] = {}
    if provider in OPENAI_COMPATIBLE or provider in ("azure_openai", "azure_openai_structured"):
        if provider.startswith("azure_openai"):
            config.update(_azure(keys))
        else:
            config.update(_base_url(keys, provider))
        config["model"] = keys.take("model") or "gpt-5-mini"
        if provider.endswith("_structured"):
            config["structured_output"] = "json_schema"
        _sampling(keys, config, extra_body=provider not in ("openai", "openai_structured"))
        if keys.take("enable_vision", False):
            config["vision"] = True
        keys.accept_default("vision_details", "auto")
        keys.accept_default("store", None)
        keys.accept_default("is_reasoning_model", None)
        extra = config.get("extra_body", {})
        keys.move("reasoning_effort", extra)
        if extra:
            config["extra_body"] = extra
        keys.accept_default("lmstudio_response_format", None)
        keys.done(_COMMON_REFUSALS)
        return {"provider": "openai", "config": config}
    if provider == "ollama":
        keys.move("ollama_base_url", config, "host")
        config["model"] = keys.take("model") or "llama3.1:70b"
        options: dict[str, Any] = {}
        keys.move("temperature", config)
        keys.move("max_tokens", config)
        keys.move("top_p", options)
        keys.move("top_k", options)
        if options:
            config["options"] = options
        if keys.take("enable_vision", False):
            config["vision"] = True
        keys.accept_default("vision_details", "auto")
        keys.accept_default("api_key", None)
        keys.done(_COMMON_REFUSALS)
        return {"provider": "ollama", "config": config}
    raise refuse(
        "llm.provider",
        f"{provider!r} has no memoweave plugin",
        "Use provider openai with base_url of an OpenAI-compatible gateway (e.g. a LiteLLM "
        "proxy), azure_openai or ollama.",
    )


def _sampling(keys: _Keys, config: dict[str, Any], *, extra_body: bool) -> None:
    keys.move("temperature", config)
    keys.move("max_tokens", config)
    for key in ("top_p", "top_k"):
        value = keys.take(key)
        if value is None:
            continue
        if key == "top_k" and not extra_body:
            if value == 1:  # mem0's default; OpenAI has no top_k and mem0 never sends it
                continue
            raise refuse("llm.config.top_k", "is not an OpenAI parameter", "Remove top_k.")
        config.setdefault("extra_body", {})[key] = value


def embedder_section(section: dict[str, Any], store: dict[str, Any]) -> dict[str, Any] | None:
    """The embedder, or ``None`` when the store embeds the text itself (Upstash
    ``enable_embeddings``; mem0 ignores its embedder then too)."""
    provider, keys = section["provider"], _Keys("embedder", section["config"])
    dims = keys.take("embedding_dims")
    if store["provider"] == "upstash_vector" and store["config"].get("enable_embeddings"):
        return None
    config: dict[str, Any] = {}
    if provider in ("openai", "azure_openai", "lmstudio", "together"):
        if provider == "azure_openai":
            config.update(_azure(keys))
        else:
            config.update(_base_url(keys, "openai" if provider == "openai" else provider))
        config["model"] = keys.take("model") or "text-embedding-3-small"
        if dims:
            config["dimensions" if provider == "openai" else "dims"] = dims
        keys.done(_COMMON_REFUSALS)
        return {"provider": "openai", "config": config}
    if provider == "ollama":
        keys.move("ollama_base_url", config, "host")
        config["model"] = keys.take("model") or "nomic-embed-text"
        if dims:
            config["dims"] = dims
        keys.done(_COMMON_REFUSALS)
        return {"provider": "ollama", "config": config}
    if provider == "huggingface":
        return _huggingface(keys, dims)
    raise refuse(
        "embedder.provider",
        f"{provider!r} has no memoweave plugin",
        "Use openai (any OpenAI-compatible server), azure_openai, ollama, or huggingface "
        "with a local model path (sentence-transformers).",
    )


def _huggingface(keys: _Keys, dims: Any) -> dict[str, Any]:
    base_url = keys.take("huggingface_base_url")
    model = keys.take("model")
    kwargs = dict(keys.take("model_kwargs") or {})
    if base_url:  # a text-embeddings-inference server speaks the OpenAI embeddings API
        config: dict[str, Any] = {"base_url": base_url, "model": model or "tei"}
        keys.move("api_key", config)
        if dims:
            config["dims"] = dims
        keys.done(_COMMON_REFUSALS)
        return {"provider": "openai", "config": config}
    config = {}
    model = model or "multi-qa-MiniLM-L6-cos-v1"
    if model not in _MINILM:
        config["model"] = model  # a local path, or a name already in the Hugging Face cache
    if "device" in kwargs:
        config["device"] = kwargs.pop("device")
    if kwargs:
        raise refuse(
            f"embedder.config.model_kwargs.{sorted(kwargs)[0]}",
            "has no memoweave equivalent",
            "The sentence-transformers embedder takes model, device, batch_size, normalize.",
        )
    keys.accept_default("api_key", None)
    keys.done(_COMMON_REFUSALS)
    return {"provider": "sentence-transformers", "config": config}


def reranker_section(section: dict[str, Any]) -> dict[str, Any]:
    """The memoweave reranker section."""
    provider, keys = section["provider"], _Keys("reranker", section["config"])
    if provider in ("sentence_transformer", "huggingface"):
        config: dict[str, Any] = {
            "model": keys.take("model") or "cross-encoder/ms-marco-MiniLM-L-6-v2"
        }
        keys.move("device", config)
        keys.move("batch_size", config)
        keys.take("top_k")  # memoweave passes retrieval.rerank_top_n results to the reranker
        keys.done()
        return {"provider": "cross-encoder", "config": config}
    raise refuse(
        "reranker.provider",
        f"{provider!r} has no memoweave plugin",
        "Use sentence_transformer (a local cross-encoder) or memoweave's llm reranker.",
    )
