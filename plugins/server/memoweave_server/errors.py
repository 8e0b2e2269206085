"""Every error as a JSON :class:`~memoweave_server.schemas.ErrorBody` with a 4xx status.

- :class:`MemoweaveError` -> by class (:func:`status_of`): 400 invalid input, 401 no or
  bad key, 403 outside the grant, 404 not found, 424 a provider or the store failed.
- a request that does not match the schema -> 422 naming the field;
- Starlette's own errors (unknown route 404, wrong method 405) keep their status.

Bodies never carry ``details`` (they may quote provider output) nor the request's input.
Anything else is a bug: the request-log middleware answers 500 ``internal_error`` and logs
the traceback.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match

from memoweave.errors import (
    Forbidden,
    HistoryError,
    MemoweaveError,
    NotFound,
    PluginError,
    ProviderError,
    ServerError,
    Unauthorized,
)

_STATUS: tuple[tuple[type[MemoweaveError], int], ...] = (
    (Unauthorized, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (ProviderError, 424),
    (PluginError, 424),
    (HistoryError, 424),
    (ServerError, 424),
)
_HTTP_CODES = {
    404: ("not_found", "Check the URL; /docs lists the routes."),
    405: ("method_not_allowed", "Check the HTTP method; /docs lists the routes."),
    413: ("payload_too_large", "Send a smaller request body."),
}
ERROR_STATUSES = (400, 401, 403, 404, 413, 422, 424)
"""Statuses every documented route may answer with an :class:`ErrorBody`."""


def status_of(error: MemoweaveError) -> int:
    """The HTTP status of a memoweave error (400 unless listed above)."""
    for cls, status in _STATUS:
        if isinstance(error, cls):
            return status
    return 400


def request_id_of(request: Request) -> str:
    return str(getattr(request.state, "request_id", "-"))


def error_response(
    status: int,
    code: str,
    message: str,
    hint: str,
    request_id: str,
    *,
    field: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {
        "code": code,
        "message": message,
        "hint": hint,
        "request_id": request_id,
    }
    if field is not None:
        body["field"] = field
    return JSONResponse(body, status_code=status, headers=headers)


def _memoweave_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MemoweaveError)
    status = status_of(exc)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return error_response(
        status, exc.code, exc.message, exc.hint, request_id_of(request), headers=headers
    )


def _field(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<request>"


def _request_validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = exc.errors()
    first = problems[0] if problems else {"loc": (), "msg": "invalid request"}
    field = _field(tuple(first.get("loc", ())))
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return error_response(
        422,
        "validation_error",
        f"{field}: {first.get('msg', 'invalid value')}{more}",
        "Fix the named field; /docs shows the request schema.",
        request_id_of(request),
        field=field,
    )


def _allowed_methods(request: Request, routes: Sequence[BaseRoute]) -> str:
    """Every method the path accepts (Starlette's ``Allow`` names only the first route's)."""
    methods: set[str] = set()
    for route in routes:
        match, _ = route.matches({**request.scope, "method": ""})
        if match != Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    return ", ".join(sorted(methods))


def _http_error_handler(routes: Sequence[BaseRoute]) -> Callable[[Request, Exception], Response]:
    def handle(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code, hint = _HTTP_CODES.get(exc.status_code, ("http_error", "See /docs."))
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = _allowed_methods(request, routes)
        return error_response(
            exc.status_code, code, str(exc.detail), hint, request_id_of(request), headers=headers
        )

    return handle


def install_error_handlers(app: FastAPI, routes: Sequence[BaseRoute]) -> None:
    """Register the handlers above on ``app``; ``routes`` (the API's) name the methods a
    405 answer allows."""
    app.add_exception_handler(MemoweaveError, _memoweave_error)
    app.add_exception_handler(RequestValidationError, _request_validation_error)
    app.add_exception_handler(HTTPException, _http_error_handler(routes))
