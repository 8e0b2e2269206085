"""A local, protocol-faithful Upstash Vector REST server for offline tests.

Usage::

    from memoweave_upstash.emulator import UpstashEmulator

    with UpstashEmulator(dims=384, metric="cosine") as emu:
        index = upstash_vector.Index(url=emu.url, token=emu.token)

Responses use the service's envelope: ``{"result": ...}`` with HTTP 200, or
``{"error": "<message>", "status": <code>}`` with that HTTP status. Every request needs
``Authorization: Bearer <token>`` (401 otherwise). Endpoints (any method; the SDK POSTs
JSON): ``/upsert``, ``/upsert-data``, ``/query``, ``/query-data``, ``/resumable-query``,
``/resumable-query-data``, ``/resumable-query-next``, ``/resumable-query-end``, ``/fetch``,
``/delete``, ``/range``, ``/update``, ``/reset`` (``?all`` for every namespace), ``/info``,
``/list-namespaces``, ``/delete-namespace``; the namespaced ones take an optional
``/<namespace>`` path segment. The server binds 127.0.0.1 on a free port and serves from a
daemon thread until :meth:`UpstashEmulator.stop`.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

from memoweave_upstash.emulator.store import EmulatedIndex, ServiceError

Route = Callable[[EmulatedIndex, str, Any, str], Any]

_ROUTES: dict[str, Route] = {
    "upsert": lambda idx, ns, body, q: idx.upsert(ns, body),
    "upsert-data": lambda idx, ns, body, q: idx.upsert(ns, body, embed=True),
    "query": lambda idx, ns, body, q: idx.query(ns, body),
    "query-data": lambda idx, ns, body, q: idx.query(ns, body, embed=True),
    "resumable-query": lambda idx, ns, body, q: idx.resumable_start(ns, body),
    "resumable-query-data": lambda idx, ns, body, q: idx.resumable_start(ns, body, embed=True),
    "resumable-query-next": lambda idx, ns, body, q: idx.resumable_next(body),
    "resumable-query-end": lambda idx, ns, body, q: idx.resumable_end(body),
    "fetch": lambda idx, ns, body, q: idx.fetch(ns, body),
    "delete": lambda idx, ns, body, q: idx.delete(ns, body),
    "range": lambda idx, ns, body, q: idx.range(ns, body),
    "update": lambda idx, ns, body, q: idx.update(ns, body),
    "reset": lambda idx, ns, body, q: idx.reset(None if "all" in q.split("&") else ns),
    "info": lambda idx, ns, body, q: idx.info(),
    "list-namespaces": lambda idx, ns, body, q: idx.list_namespaces(),
    "delete-namespace": lambda idx, ns, body, q: idx.delete_namespace(ns),
}


class _Handler(BaseHTTPRequestHandler):
    server: _EmulatorHTTPServer
    protocol_version = "HTTP/1.1"
    wbufsize = -1  # headers and body leave in one write (no delayed-ACK stall)
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def do_POST(self) -> None:
        self._dispatch()

    do_GET = do_POST
    do_PUT = do_POST
    do_DELETE = do_POST

    def _dispatch(self) -> None:
        try:
            status, payload = 200, {"result": self._handle()}
        except ServiceError as exc:
            status, payload = exc.status, {"error": exc.message, "status": exc.status}
        except Exception as exc:  # pragma: no cover - a bug in the emulator itself
            status, payload = 500, {"error": f"Internal error: {exc}", "status": 500}
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self._authorized():
            raise ServiceError(401, "Unauthorized: Invalid auth token")
        parts = urlsplit(self.path)
        segments = [unquote(s) for s in parts.path.split("/") if s]
        if not segments or len(segments) > 2:
            raise ServiceError(404, f"Not Found: {parts.path}")
        endpoint, namespace = segments[0], (segments[1] if len(segments) == 2 else "")
        route = _ROUTES.get(endpoint)
        if route is None:
            raise ServiceError(404, f"Not Found: {parts.path}")
        try:
            body = json.loads(raw) if raw.strip() else None
        except ValueError as exc:
            raise ServiceError(400, f"Invalid JSON body: {exc}") from None
        self.server.requests.append(endpoint)
        return route(self.server.index, namespace, body, parts.query)

    def _authorized(self) -> bool:
        header = self.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        expected = self.server.token.encode()
        return scheme.lower() == "bearer" and hmac.compare_digest(token.encode(), expected)


class _EmulatorHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, index: EmulatedIndex, token: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.index = index
        self.token = token
        self.requests: list[str] = []


class UpstashEmulator:
    """A running emulated Upstash Vector index (one dense index, many namespaces).

    ``embedding_model`` (e.g. ``BUILTIN_MODEL``) makes it an index that embeds ``data``
    itself with the deterministic :func:`~memoweave_upstash.emulator.store.builtin_embedding`.
    ``url`` and ``token`` are what ``upstash_vector.Index`` needs; ``index`` is the
    in-memory state; ``requests`` lists the endpoint of every authorised request served.
    """

    def __init__(
        self,
        dims: int,
        metric: str = "cosine",
        *,
        token: str | None = None,
        max_batch: int = 1000,
        embedding_model: str | None = None,
    ) -> None:
        self.index = EmulatedIndex(
            dims, metric, max_batch=max_batch, embedding_model=embedding_model
        )
        self.token = token or secrets.token_urlsafe(24)
        self._server: _EmulatorHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL of the running server (``http://127.0.0.1:<port>``)."""
        if self._server is None:
            raise RuntimeError("the emulator is not running; call start() first")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[str]:
        """Endpoints of the authorised requests served so far, in order."""
        return self._server.requests if self._server is not None else []

    def start(self) -> UpstashEmulator:
        """Bind a free 127.0.0.1 port and serve from a daemon thread."""
        if self._server is None:
            self._server = _EmulatorHTTPServer(self.index, self.token)
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="upstash-emulator",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port. Idempotent."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._server = None
            self._thread = None

    def __enter__(self) -> UpstashEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["UpstashEmulator"]
