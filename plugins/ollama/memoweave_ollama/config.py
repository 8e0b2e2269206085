"""Configuration models of the ``ollama`` LLM and embedder (pydantic, no SDK import).

Both share :class:`OllamaConnectionConfig`: the server (``host``, else ``$OLLAMA_HOST``,
else ``http://127.0.0.1:11434``), optional credentials for proxies or ollama.com, the
timeout / retry policy, ``keep_alive`` and default model ``options``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

#: ``options`` keys that have their own config field or are set per call.
_RESERVED_OPTIONS = frozenset({"num_predict", "temperature", "num_ctx"})


class OllamaConnectionConfig(BaseModel):
    """Server, credentials, timeout, retries and model lifetime (shared by LLM and embedder)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    host: str | None = Field(
        default=None,
        description="Ollama server, e.g. http://localhost:11434 or gpu-box:11434; defaults "
        "to $OLLAMA_HOST, else http://127.0.0.1:11434.",
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="Bearer token for ollama.com or an authenticating proxy; defaults to "
        "$OLLAMA_API_KEY (read by the ollama client).",
    )
    headers: dict[str, str] | None = Field(
        default=None, description="Extra HTTP headers sent with every request."
    )
    timeout: float = Field(default=120.0, gt=0, description="Seconds per HTTP attempt.")
    max_retries: int = Field(
        default=2,
        ge=0,
        le=20,
        description="Retries on 408/409/429/5xx, timeouts and connection errors.",
    )
    retry_backoff: float = Field(
        default=0.5, ge=0, description="First retry delay in seconds; doubles per retry."
    )
    retry_max_delay: float = Field(default=8.0, ge=0, description="Cap of one retry delay.")
    keep_alive: str | float | None = Field(
        default=None,
        description="How long Ollama keeps the model loaded after a call ('5m', '1h', "
        "seconds, -1 forever, 0 unload); server default when unset.",
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Default model options sent with every call (top_p, top_k, seed, "
        "num_thread, stop...); see the Ollama Modelfile parameters.",
    )

    @field_validator("host")
    @classmethod
    def _host(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if not value:
            raise ValueError("host must not be empty (unset it to use $OLLAMA_HOST)")
        if "://" in value and not value.startswith(("http://", "https://")):
            raise ValueError("host must use http:// or https://")
        return value.rstrip("/")

    @field_validator("options")
    @classmethod
    def _options(cls, value: dict[str, Any]) -> dict[str, Any]:
        clash = sorted(_RESERVED_OPTIONS & set(value))
        if clash:
            raise ValueError(
                f"set {', '.join(clash)} through their own fields (num_ctx, temperature, "
                "max_tokens), not options"
            )
        return value


class OllamaLLMConfig(OllamaConnectionConfig):
    """Configuration of the ``ollama`` LLM provider."""

    model: str = Field(default="llama3.2", min_length=1, description="Model name, e.g. qwen3:8b.")
    temperature: float | None = Field(
        default=None, ge=0, le=2, description="Default temperature (per-call value wins)."
    )
    max_tokens: int | None = Field(
        default=None, gt=0, description="Default completion limit, sent as num_predict."
    )
    num_ctx: int | None = Field(
        default=None, gt=0, description="Context window in tokens (Ollama's default if unset)."
    )
    tools: bool = Field(default=True, description="The model supports tool calls.")
    vision: bool = Field(
        default=False, description="The model accepts images (llava, gemma3, qwen2.5vl...)."
    )
    think: bool | None = Field(
        default=None,
        description="Thinking models: true/false enables/disables thinking; unset leaves the "
        "server default. The thinking text is never part of the answer.",
    )


class OllamaEmbedderConfig(OllamaConnectionConfig):
    """Configuration of the ``ollama`` embedder."""

    model: str = Field(default="nomic-embed-text", min_length=1)
    batch_size: int = Field(default=64, ge=1, le=4096, description="Texts per /api/embed call.")
    dims: int | None = Field(
        default=None,
        gt=0,
        description="Expected vector length (checked, not sent); discovered on the first "
        "call if unset.",
    )
    dimensions: int | None = Field(
        default=None,
        gt=0,
        description="Sent to the server to shorten vectors (Matryoshka models, Ollama >= "
        "0.11); never sent unless set.",
    )
    truncate: bool = Field(
        default=True,
        description="Let the server cut texts longer than the context; false makes over-long "
        "texts an EmbeddingError.",
    )
    num_ctx: int | None = Field(default=None, gt=0, description="Context window in tokens.")
    query_prefix: str = Field(
        default="", description="Prepended to purpose='query' texts (nomic: 'search_query: ')."
    )
    document_prefix: str = Field(
        default="",
        description="Prepended to purpose='document' texts (nomic: 'search_document: ').",
    )

    @model_validator(mode="after")
    def _dims_agree(self) -> OllamaEmbedderConfig:
        if self.dims and self.dimensions and self.dims != self.dimensions:
            raise ValueError(f"dims={self.dims} contradicts dimensions={self.dimensions}")
        return self


__all__ = ["OllamaConnectionConfig", "OllamaEmbedderConfig", "OllamaLLMConfig"]
