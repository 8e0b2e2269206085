"""Configuration models of the ``openai`` LLM and embedder (pydantic, no SDK import).

Both share :class:`ConnectionConfig`: where the server is (OpenAI, any OpenAI-compatible
``base_url``, or Azure OpenAI through ``azure_endpoint``), the credentials, and the
timeout / retry policy. Secrets may also come from the environment (``OPENAI_API_KEY``,
``AZURE_OPENAI_API_KEY``), read when the provider is created.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

StructuredOutput = Literal["auto", "json_schema", "json_object_schema", "json_object", "prompt"]
ToolChoice = Literal["auto", "required", "none", "force"]


class ConnectionConfig(BaseModel):
    """Server, credentials, timeout and retries (shared by the LLM and the embedder)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    api_key: SecretStr | None = Field(
        default=None,
        description="API key; defaults to $OPENAI_API_KEY ($AZURE_OPENAI_API_KEY for Azure). "
        "Optional for a custom base_url.",
    )
    base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1; defaults to "
        "$OPENAI_BASE_URL, else api.openai.com.",
    )
    organization: str | None = None
    project: str | None = None
    azure_endpoint: str | None = Field(
        default=None, description="Azure OpenAI resource URL; selects the Azure client."
    )
    azure_deployment: str | None = Field(
        default=None, description="Azure deployment name (defaults to `model`)."
    )
    api_version: str | None = Field(
        default=None, description="Azure API version; defaults to $OPENAI_API_VERSION."
    )
    timeout: float = Field(default=60.0, gt=0, description="Seconds per HTTP attempt.")
    max_retries: int = Field(
        default=2, ge=0, le=20, description="Retries on 408/409/429/5xx and connection errors."
    )
    retry_backoff: float = Field(
        default=0.5, ge=0, description="First retry delay in seconds; doubles per retry."
    )
    retry_max_delay: float = Field(default=8.0, ge=0, description="Cap of one retry delay.")
    default_headers: dict[str, str] | None = Field(
        default=None, description="Extra HTTP headers sent with every request."
    )

    @field_validator("base_url", "azure_endpoint")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/") if value else value

    @model_validator(mode="after")
    def _azure_xor_base_url(self) -> ConnectionConfig:
        if self.azure_endpoint and self.base_url:
            raise ValueError("set either base_url or azure_endpoint, not both")
        return self


class OpenAILLMConfig(ConnectionConfig):
    """Configuration of the ``openai`` LLM provider."""

    model: str = Field(default="gpt-4.1-mini", min_length=1, description="Model name.")
    structured_output: StructuredOutput = Field(
        default="auto",
        description="How JSON output is obtained: json_schema (OpenAI response_format), "
        "json_object_schema (llama.cpp: json_object + schema grammar), json_object (JSON "
        "mode + schema in the prompt), prompt (instructions + parsing), or auto.",
    )
    temperature: float | None = Field(
        default=None, ge=0, le=2, description="Default temperature (per-call value wins)."
    )
    max_tokens: int | None = Field(
        default=None, gt=0, description="Default completion limit (per-call value wins)."
    )
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] | None = Field(
        default=None,
        description="Request field for the limit; default max_completion_tokens on OpenAI "
        "and Azure, max_tokens elsewhere.",
    )
    tools: bool = Field(default=True, description="The server supports tool calls.")
    tool_choice: ToolChoice | None = Field(
        default=None,
        description="Sent with tools: auto/required/none, or force (name the only tool, or "
        "the first; needed by llama-cpp-python to return tool calls).",
    )
    vision: bool | None = Field(
        default=None, description="Image parts allowed; default true on OpenAI/Azure only."
    )
    strict_schema: bool | None = Field(
        default=None,
        description="strict=true with json_schema (OpenAI strict mode): unset follows each "
        "ResponseSchema's own strict flag (true for the core's schemas); true/false forces it.",
    )
    extra_body: dict[str, Any] | None = Field(
        default=None, description="Extra JSON fields merged into every chat request."
    )


class OpenAIEmbedderConfig(ConnectionConfig):
    """Configuration of the ``openai`` embedder."""

    model: str = Field(default="text-embedding-3-small", min_length=1)
    dimensions: int | None = Field(
        default=None,
        gt=0,
        description="Sent to the server to shorten vectors (Matryoshka models only); "
        "never sent unless set.",
    )
    dims: int | None = Field(
        default=None,
        gt=0,
        description="Expected vector length (not sent); discovered on the first call if unset.",
    )
    batch_size: int = Field(default=128, ge=1, le=2048, description="Texts per request.")
    query_prefix: str = Field(default="", description="Prepended to purpose='query' texts.")
    document_prefix: str = Field(default="", description="Prepended to purpose='document'.")

    @model_validator(mode="after")
    def _dims_agree(self) -> OpenAIEmbedderConfig:
        if self.dims and self.dimensions and self.dims != self.dimensions:
            raise ValueError(f"dims={self.dims} contradicts dimensions={self.dimensions}")
        return self


__all__ = [
    "ConnectionConfig",
    "OpenAIEmbedderConfig",
    "OpenAILLMConfig",
    "StructuredOutput",
    "ToolChoice",
]
