"""The streamable HTTP transport behind the REST server's keys and request log.

The MCP endpoint is ``/mcp``. With keys configured, a request without a valid key is
answered 401 (JSON ``{code, message, hint, request_id}``) before the MCP layer sees it,
and each tool call resolves the key's grant again (:class:`ToolScope`). Without keys the
SDK's DNS-rebinding protection (localhost hosts only) stays on, as the bind is 127.0.0.1.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from memoweave_server.observe import ASGIApp, Receive, RequestLog, Scope, Send

from memoweave.access import KeyRing, presented_key
from memoweave.errors import Unauthorized

MCP_PATH = "/mcp"


class RequireKey:
    """ASGI middleware: 401 unless the request carries a configured key."""

    def __init__(self, app: ASGIApp, keyring: KeyRing) -> None:
        self.app = app
        self.keyring = keyring

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.keyring.open:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                       for k, v in scope.get("headers", [])}  # fmt: skip
            try:
                scope.setdefault("state", {})["principal"] = self.keyring.authenticate(
                    presented_key(headers)
                )
            except Unauthorized as exc:
                await _unauthorized(send, exc, scope.get("state", {}).get("request_id", "-"))
                return
        await self.app(scope, receive, send)


async def _unauthorized(send: Send, exc: Unauthorized, request_id: str) -> None:
    body = json.dumps(
        {"code": exc.code, "message": exc.message, "hint": exc.hint, "request_id": request_id}
    ).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b"Bearer"),
                (b"content-length", str(len(body)).encode("ascii")),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def http_app(server: MCPServer, keyring: KeyRing, *, log_format: str = "text") -> Any:
    """The ASGI app serving ``server`` at ``/mcp``: request log, then the key check."""
    security = (
        None  # the SDK default: only localhost Host headers
        if keyring.open
        else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security)
    return RequestLog(RequireKey(app, keyring), log_format=log_format)
