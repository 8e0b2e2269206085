"""Running an ASGI app with uvicorn the way both servers do: the bind rule, the startup
notice and the access log handler."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from memoweave.access import KeyRing
from memoweave_server.observe import LOGGER_NAME

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
LOCAL_ONLY = "127.0.0.1"


def bind_host(requested: str, keyring: KeyRing) -> tuple[str, str | None]:
    """The host to bind and a notice to print. With no key configured the server binds
    127.0.0.1 whatever was asked, and says so."""
    if not keyring.open:
        return requested, None
    if requested in LOOPBACK_HOSTS:
        return requested, (
            f"no API key configured: listening on {requested} only, every local caller is admin"
        )
    return LOCAL_ONLY, (
        f"no API key configured: listening on {LOCAL_ONLY} only (not {requested}); "
        "add server.keys to serve other machines"
    )


def configure_access_log(level: int = logging.INFO) -> None:
    """Send the one-line-per-request log to stderr (idempotent)."""
    logger = logging.getLogger(LOGGER_NAME)
    logger.setLevel(level)
    if not any(getattr(h, "_memoweave", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler._memoweave = True  # type: ignore[attr-defined]  # a marker attribute on the handler
        logger.addHandler(handler)
    logger.propagate = False


def serve_asgi(
    app: Any, host: str, port: int, *, on_exit: Callable[[], Awaitable[None]] | None = None
) -> None:
    """Serve ``app`` until interrupted, then await ``on_exit`` on the same event loop
    (uvicorn's own access log is off: ours is one line per request)."""
    import uvicorn

    configure_access_log()
    config = uvicorn.Config(app, host=host, port=port, access_log=False, log_level="warning")

    async def main() -> None:
        try:
            await uvicorn.Server(config).serve()
        finally:
            if on_exit is not None:
                await on_exit()

    asyncio.run(main())
