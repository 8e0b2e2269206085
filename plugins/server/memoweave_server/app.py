"""``create_app``: the REST server as a FastAPI application (ASGI), for ``memoweave serve``,
tests (httpx in process) and embedding in an existing app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from memoweave.access import KeyRing
from memoweave.config.server import ServerConfig
from memoweave_server.errors import install_error_handlers
from memoweave_server.observe import RequestLog
from memoweave_server.routes import SERVER_VERSION, router
from memoweave_server.service import MemoryService

DESCRIPTION = """\
Long-term memory for LLM applications, over HTTP. mem0's routes and shapes.

**Keys.** Send `Authorization: Bearer <key>` or `X-API-Key: <key>`. Each key has a grant
(the user_id / agent_id / run_id values it may use) and a role (member or admin). A
request whose scope is outside the grant is refused with 403; a memory outside it is
answered 404, as if it did not exist. `POST /reset` and `DELETE /memories` without a scope
need an admin key. A server with no key configured listens on 127.0.0.1 only.

**Errors.** Every error is JSON `{code, message, hint, request_id}`; `X-Request-ID` is
echoed (or created) on every response.
"""


def create_app(
    service: MemoryService, server: ServerConfig | None = None, *, close_on_shutdown: bool = False
) -> FastAPI:
    """The REST app over ``service``; ``server`` (default: the service's configuration)
    supplies the keys, CORS origins and log format. With ``close_on_shutdown`` the app's
    lifespan closes its service (``app.state.service``) on the server's loop when the
    server stops."""
    server = server if server is not None else service.config.server

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            current = getattr(app.state, "service", None)
            if close_on_shutdown and current is not None:
                await current.close()

    app = FastAPI(
        title="memoweave", version=SERVER_VERSION, description=DESCRIPTION, lifespan=lifespan
    )
    app.state.service = service
    app.state.keyring = KeyRing.from_config(server)
    install_error_handlers(app, router.routes)
    app.include_router(router)
    if server.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=server.cors_origins,
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["Authorization", "X-API-Key", "Content-Type", "X-Request-ID"],
            expose_headers=["X-Request-ID"],
        )
    app.add_middleware(RequestLog, log_format=server.log_format)
    return app
