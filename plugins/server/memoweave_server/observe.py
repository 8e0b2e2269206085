"""Request ids and one structured log line per request (pure ASGI middleware).

- The request id is the client's ``X-Request-ID`` when it is 1-128 printable characters,
  else a new one; it is returned in ``X-Request-ID``, put in every error body, and kept
  in ``scope["state"]["request_id"]``.
- One line per request on the ``memoweave.server`` logger, as JSON or ``key=value`` text:
  time, request id, method, path, status, duration, the key's *name* (never the key),
  client address. Query strings and bodies are never logged.
- A body over the limit is answered 413: at once when ``Content-Length`` says so, else
  (chunked) as soon as the bytes received pass it.
- An unexpected exception is logged with its traceback and answered 500
  ``internal_error`` (no detail leaks to the client).
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from datetime import datetime, timezone
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOGGER_NAME = "memoweave.server"
MAX_BODY_BYTES = 4 * 1024 * 1024
_REQUEST_ID = re.compile(r"[\x21-\x7e]{1,128}")
_SMALLER = "Send a smaller request body."
_BUG = "This is a bug in memoweave; report it with the request id."


def request_id_from(headers: list[tuple[bytes, bytes]]) -> str:
    """The client's ``X-Request-ID`` if it is safe to echo and log, else a new id."""
    for name, value in headers:
        if name == b"x-request-id":
            text = value.decode("latin-1")
            if _REQUEST_ID.fullmatch(text):
                return text
            break
    return uuid.uuid4().hex


def format_line(fields: dict[str, Any], log_format: str) -> str:
    """One log line: JSON, or ``key=value`` pairs (values with spaces quoted)."""
    if log_format == "json":
        return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
    parts = []
    for key, value in fields.items():
        text = "-" if value is None else str(value)
        parts.append(f"{key}={json.dumps(text) if ' ' in text or not text else text}")
    return " ".join(parts)


class _BodyTooLarge(Exception):
    """Raised into the app by ``receive`` when a chunked body passes the limit."""


class RequestLog:
    """Wrap an ASGI app with request ids, access logging, a body limit and a 500 guard."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        log_format: str = "text",
        logger: logging.Logger | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        self.app = app
        self.log_format = log_format
        self.logger = logger or logging.getLogger(LOGGER_NAME)
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = request_id_from(scope.get("headers", []))
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        started = time.perf_counter()
        status = 0

        received = 0
        overflow = False  # a chunked body passed the limit: the app's answer becomes a 413
        too_large = f"the request body is over {self.max_body_bytes} bytes"

        async def counted_receive() -> Message:
            nonlocal received, overflow
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    overflow = True
                    raise _BodyTooLarge
            return message

        async def emit(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode("latin-1")))
                message["headers"] = headers
            await send(message)

        async def send_with_id(message: Message) -> None:
            if not overflow:
                await emit(message)
            elif message["type"] == "http.response.start" and status == 0:
                await _send_error(emit, 413, "payload_too_large", request_id, too_large, _SMALLER)

        try:
            if self._too_large(scope):
                await _send_error(emit, 413, "payload_too_large", request_id, too_large, _SMALLER)
            else:
                await self.app(scope, counted_receive, send_with_id)
        except _BodyTooLarge:
            if status == 0:
                await _send_error(emit, 413, "payload_too_large", request_id, too_large, _SMALLER)
        except Exception:
            self.logger.exception("unhandled error in request %s", request_id)
            if status == 0:
                message = "internal server error"
                await _send_error(emit, 500, "internal_error", request_id, message, _BUG)
        finally:
            self._log(scope, state, request_id, status, started)

    def _too_large(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    return int(value) > self.max_body_bytes
                except ValueError:
                    return False
        return False

    def _log(
        self, scope: Scope, state: dict[str, Any], request_id: str, status: int, started: float
    ) -> None:
        principal = state.get("principal")
        client = scope.get("client")
        fields = {
            "ts": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            "request_id": request_id,
            "method": scope.get("method"),
            "path": scope.get("path"),
            "status": status or 500,
            "ms": round((time.perf_counter() - started) * 1000, 2),
            "key": getattr(principal, "name", None),
            "client": client[0] if client else None,
        }
        self.logger.info(format_line(fields, self.log_format))


async def _send_error(
    send: Send, status: int, code: str, request_id: str, message: str, hint: str
) -> None:
    body = json.dumps(
        {"code": code, "message": message, "hint": hint, "request_id": request_id}
    ).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode("ascii")),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
