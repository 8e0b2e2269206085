"""Request and response bodies of the REST API (mem0's shapes, plus memoweave's fields).

Requests ignore unknown fields (mem0 clients send a few more); the core validates every
value again and answers 400 with a hint. Responses allow extra fields: memoweave adds
provenance and lifecycle keys to mem0's items.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

IdField = Field(default=None, min_length=1, max_length=128)


class ErrorBody(BaseModel):
    """Every error: a stable code, one line saying what went wrong, one saying how to fix it."""

    code: str = Field(description="Stable, machine-readable (e.g. not_found, forbidden).")
    message: str
    hint: str
    request_id: str
    field: str | None = Field(default=None, description="The offending field, when known.")


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(extra="allow", strict=True)

    role: str = Field(description="user, assistant, system or tool.")
    content: Union[str, list[dict[str, Any]]] = Field(
        description="Text, or a list of {type: text|image_url, ...} parts."
    )
    name: str | None = None


class Request(BaseModel):
    """Base of request bodies: types are strict (``0`` is not ``false``), unknown fields
    are ignored."""

    model_config = ConfigDict(strict=True)


class AddRequest(Request):
    """``POST /memories``: distil messages into memories of one scope."""

    messages: Union[str, list[Message]]
    user_id: str | None = IdField
    agent_id: str | None = IdField
    run_id: str | None = IdField
    metadata: dict[str, Any] | None = None
    infer: bool = True
    memory_type: str | None = None
    prompt: str | None = None
    expiration_date: str | None = Field(default=None, description="ISO 8601 date or datetime.")
    observed_at: str | None = Field(
        default=None, description="When the conversation happened (ISO 8601); default now."
    )


class SearchRequest(Request):
    """``POST /search``: the memories of a scope most relevant to a query."""

    query: str = Field(min_length=1, max_length=8000)
    filters: dict[str, Any] | None = Field(
        default=None, description="Scope keys and metadata conditions ({field: {op: value}})."
    )
    user_id: str | None = IdField
    agent_id: str | None = IdField
    run_id: str | None = IdField
    top_k: int = Field(default=20, ge=1, le=1000)
    limit: int | None = Field(default=None, ge=1, le=1000, description="mem0's name for top_k.")
    threshold: float | None = None
    rerank: bool = False
    explain: bool = False
    include_superseded: bool = False
    show_expired: bool = False


class UpdateRequest(Request):
    """``PUT /memories/{id}``: new text and/or metadata (identity keys never change)."""

    text: str | None = Field(default=None, min_length=1)
    data: str | None = Field(default=None, min_length=1, description="mem0's name for text.")
    metadata: dict[str, Any] | None = None


class MemoryItem(BaseModel):
    """One memory, mem0-shaped."""

    model_config = ConfigDict(extra="allow")

    id: str
    memory: str
    hash: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: str | None = None
    updated_at: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None


class SearchHit(MemoryItem):
    score: float
    explain: dict[str, Any] | None = None


class Relation(BaseModel):
    """One relation a search reached in the scope's graph (mem0 v1's shape)."""

    source: str
    relationship: str
    destination: str
    hop: int = Field(description="Hops from an entity named in the query (1 = direct).")
    memory_ids: list[str] = Field(description="The scope's memories asserting it.")


class SearchResult(BaseModel):
    results: list[SearchHit]
    relations: list[Relation] | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="Present only when a graph store is configured.",
    )


class MemoryPage(BaseModel):
    results: list[MemoryItem]
    next_cursor: str | None = None


class Change(BaseModel):
    """One change an add made."""

    model_config = ConfigDict(extra="allow")

    id: str
    memory: str | None = None
    event: Literal["ADD", "UPDATE", "SUPERSEDE", "DELETE"]


class AddResult(BaseModel):
    results: list[Change]


class UpdateResult(MemoryItem):
    message: str


class HistoryEvent(BaseModel):
    """One event of a memory's history (supersession names the successor)."""

    model_config = ConfigDict(extra="allow")

    id: str
    memory_id: str
    old_memory: str | None = None
    new_memory: str | None = None
    event: str
    created_at: str | None = None
    updated_at: str | None = None
    is_deleted: bool = False
    superseded_by: str | None = None


class MessageResult(BaseModel):
    message: str


class Health(BaseModel):
    status: Literal["ok"]


class Version(BaseModel):
    memoweave: str
    server: str
