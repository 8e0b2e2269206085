"""The REST routes: mem0's endpoints and shapes, each checked against the caller's grant.

- Scoped routes (add, list, search, delete-all) check the request's scope with
  :meth:`Principal.check_scope` (403 outside the grant) before calling memory.
- By-id routes (get, update, delete, history) look the memory up first and answer 404,
  exactly as for an unknown id, when it lies outside the grant; the write then runs with
  the memory's own scope, so the core checks it again.
- ``POST /reset`` and ``DELETE /memories`` without a scope need an admin key.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Security
from fastapi.security import APIKeyHeader, HTTPBearer

from memoweave import __version__
from memoweave.access import Principal, presented_key
from memoweave.errors import NotFound, ValidationError
from memoweave.memory.scope import IDENTITY_KEYS, Scope
from memoweave.memory.validate import merge_scope_filters
from memoweave_server import schemas as s
from memoweave_server.errors import ERROR_STATUSES
from memoweave_server.service import MemoryService

SERVER_VERSION = "0.1.0"
ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": s.ErrorBody} for status in ERROR_STATUSES
}
_bearer = HTTPBearer(auto_error=False, description="Authorization: Bearer <key>")
_api_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="X-API-Key: <key>")


async def caller(
    request: Request,
    _bearer_key: Annotated[Any, Security(_bearer)] = None,
    _header_key: Annotated[Any, Security(_api_key)] = None,
) -> Principal:
    """The request's principal (401 when keys are configured and none matches)."""
    principal = request.app.state.keyring.authenticate(presented_key(request.headers))
    request.state.principal = principal
    return principal


def service_of(request: Request) -> MemoryService:
    return request.app.state.service


IdQuery = Annotated[str | None, Query(min_length=1, max_length=128)]


def _ids(user_id: str | None, agent_id: str | None, run_id: str | None) -> dict[str, str]:
    given = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    return {k: v for k, v in given.items() if v is not None}


def scope_query(
    user_id: IdQuery = None, agent_id: IdQuery = None, run_id: IdQuery = None
) -> dict[str, str]:
    """The ``user_id`` / ``agent_id`` / ``run_id`` query parameters that were given."""
    return _ids(user_id, agent_id, run_id)


Caller = Annotated[Principal, Depends(caller)]
Service = Annotated[MemoryService, Depends(service_of)]
ScopeQuery = Annotated[dict[str, str], Depends(scope_query)]

router = APIRouter()


def _read_scope(principal: Principal, filters: Any, ids: dict[str, str], operation: str) -> None:
    merged = merge_scope_filters(filters, **ids)
    principal.check_scope(Scope.from_filters(merged, operation=operation).as_dict())


def _not_found(memory_id: str) -> NotFound:
    return NotFound(f"no memory with id {memory_id}")


async def _visible(
    service: MemoryService, principal: Principal, memory_id: str, ids: dict[str, str]
) -> dict[str, Any]:
    """The memory if it exists inside the caller's grant (and ``ids``), else 404."""
    item = await service.get(memory_id, **ids)
    if item is None or not principal.can_see(item):
        raise _not_found(memory_id)
    return item


def _identity(item: dict[str, Any]) -> dict[str, str]:
    return {k: item[k] for k in IDENTITY_KEYS if item.get(k) is not None}


@router.post("/memories", response_model=s.AddResult, responses=ERRORS, tags=["memories"])
async def add_memories(body: s.AddRequest, principal: Caller, service: Service) -> Any:
    """Distil messages into memories of the scope (user_id / agent_id / run_id)."""
    scope = Scope.of(**_ids(body.user_id, body.agent_id, body.run_id), operation="add()")
    principal.check_scope(scope.as_dict())
    messages: Any = body.messages
    if not isinstance(messages, str):
        messages = [m.model_dump(exclude_none=True) for m in messages]
    return await service.add(
        messages,
        **scope.as_dict(),
        metadata=body.metadata,
        infer=body.infer,
        memory_type=body.memory_type,
        prompt=body.prompt,
        expiration_date=body.expiration_date,
        observed_at=body.observed_at,
    )


@router.get("/memories", response_model=s.MemoryPage, responses=ERRORS, tags=["memories"])
async def list_memories(
    principal: Caller,
    service: Service,
    ids: ScopeQuery,
    filters: Annotated[str | None, Query(description="A JSON object of conditions.")] = None,
    top_k: Annotated[int, Query(ge=1, le=1000)] = 100,
    cursor: Annotated[str | None, Query(min_length=1)] = None,
    include_superseded: bool = False,
    show_expired: bool = False,
) -> Any:
    """One page of the scope's memories; pass ``next_cursor`` back as ``cursor``."""
    parsed = _parse_filters(filters)
    _read_scope(principal, parsed, ids, "get_all()")
    return await service.get_all(
        filters=parsed,
        **ids,
        top_k=top_k,
        cursor=cursor,
        include_superseded=include_superseded,
        show_expired=show_expired,
    )


@router.delete("/memories", response_model=s.MessageResult, responses=ERRORS, tags=["memories"])
async def delete_memories(
    principal: Caller,
    service: Service,
    ids: ScopeQuery,
) -> Any:
    """Delete every memory of the scope; with no scope (admin keys only) every memory."""
    if not ids:
        principal.require_admin("deleting every memory (no scope given)")
        await service.reset()
        return {"message": "All memories deleted."}
    principal.check_scope(Scope.of(**ids, operation="delete_all()").as_dict())
    return await service.delete_all(**ids)


@router.get(
    "/memories/{memory_id}", response_model=s.MemoryItem, responses=ERRORS, tags=["memories"]
)
async def get_memory(
    memory_id: str,
    principal: Caller,
    service: Service,
    ids: ScopeQuery,
) -> Any:
    """One memory by id (404 when it does not exist or is outside the key's grant)."""
    return await _visible(service, principal, memory_id, ids)


@router.put(
    "/memories/{memory_id}", response_model=s.UpdateResult, responses=ERRORS, tags=["memories"]
)
async def update_memory(
    memory_id: str,
    body: s.UpdateRequest,
    principal: Caller,
    service: Service,
    ids: ScopeQuery,
) -> Any:
    """Rewrite a memory's text and/or replace its metadata."""
    item = await _visible(service, principal, memory_id, ids)
    return await service.update(
        memory_id, text=body.text, data=body.data, metadata=body.metadata, **_identity(item)
    )


@router.delete(
    "/memories/{memory_id}", response_model=s.MessageResult, responses=ERRORS, tags=["memories"]
)
async def delete_memory(
    memory_id: str,
    principal: Caller,
    service: Service,
    ids: ScopeQuery,
) -> Any:
    """Delete one memory (recorded in its history)."""
    item = await _visible(service, principal, memory_id, ids)
    return await service.delete(memory_id, **_identity(item))


@router.get(
    "/memories/{memory_id}/history",
    response_model=list[s.HistoryEvent],
    responses=ERRORS,
    tags=["memories"],
)
async def memory_history(
    memory_id: str,
    principal: Caller,
    service: Service,
    ids: ScopeQuery,
) -> Any:
    """The memory's events, oldest first: ADD, UPDATE, SUPERSEDE (naming the successor in
    ``superseded_by``), DELETE. Deleted memories keep their history."""
    pinned = principal.pinned_scope()
    if any(ids.get(key, value) != value for key, value in pinned.items()):
        raise _not_found(memory_id)  # asks for a scope outside the grant: as unknown
    # the core reads only the history of a memory inside this scope ([] otherwise)
    events = await service.history(memory_id, **{**pinned, **ids})
    if not events or not all(principal.can_see(e) for e in events):
        raise _not_found(memory_id)
    return events


@router.post("/search", response_model=s.SearchResult, responses=ERRORS, tags=["search"])
async def search_memories(body: s.SearchRequest, principal: Caller, service: Service) -> Any:
    """The scope's memories most relevant to the query, best first; scores are comparable
    across queries. With a graph store, ``relations`` lists what the query's entities
    reach in the scope's graph."""
    ids = _ids(body.user_id, body.agent_id, body.run_id)
    _read_scope(principal, body.filters, ids, "search()")
    return await service.search(
        body.query,
        filters=body.filters,
        **ids,
        top_k=body.top_k,
        limit=body.limit,
        threshold=body.threshold,
        rerank=body.rerank,
        explain=body.explain,
        include_superseded=body.include_superseded,
        show_expired=body.show_expired,
    )


@router.post("/reset", response_model=s.MessageResult, responses=ERRORS, tags=["admin"])
async def reset(principal: Caller, service: Service) -> Any:
    """Delete every memory, the history and the indexes (admin keys only)."""
    principal.require_admin("reset")
    await service.reset()
    return {"message": "Memory store reset successfully!"}


@router.get("/health", response_model=s.Health, tags=["service"])
async def health() -> Any:
    """Liveness (no key needed)."""
    return {"status": "ok"}


@router.get("/version", response_model=s.Version, tags=["service"])
async def version() -> Any:
    """The memoweave and server versions (no key needed)."""
    return {"memoweave": __version__, "server": SERVER_VERSION}


def _parse_filters(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValidationError(
            f"filters is not valid JSON: {exc}", hint='Pass filters={"topic": "travel"}.'
        ) from None
    if not isinstance(value, dict):
        raise ValidationError(
            f"filters must be a JSON object, got {type(value).__name__}",
            hint='Pass filters={"topic": "travel"}.',
        )
    return value
