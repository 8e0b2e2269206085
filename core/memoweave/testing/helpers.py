"""Helpers shared by the conformance suites and usable by plugin tests."""

from __future__ import annotations

import json
import math
import socket
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from pydantic import BaseModel

#: The text the 500-server puts in its error body; providers must surface it in the error.
ERROR_MARKER = "kit-500-marker"

#: Served with every 500: OpenAI's ``{"error": {"message"}}`` shape plus a top-level
#: ``message``; Ollama-style clients read ``error`` (whose text contains the marker too).
ERROR_BODY: dict[str, Any] = {
    "error": {"message": ERROR_MARKER, "type": "server_error", "code": "kit_500"},
    "message": ERROR_MARKER,
}


def create_provider(
    kind: str, name: str, config: Mapping[str, Any] | BaseModel | None = None
) -> Any:
    """Build a provider the way users do: through ``load_registry()`` (entry points included)."""
    from memoweave.plugins import load_registry

    return load_registry().create(kind, name, config)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (at the time of the call)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def closed_port_url() -> str:
    """A base URL whose connections are refused (``http://127.0.0.1:<free port>``)."""
    return f"http://127.0.0.1:{free_port()}"


class _ErrorHandler(BaseHTTPRequestHandler):
    """Answers every request with HTTP 500 and :data:`ERROR_BODY`."""

    def _fail(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        body = json.dumps(ERROR_BODY).encode()
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.server.hits += 1  # type: ignore[attr-defined]  # set by error_server

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _fail

    def log_message(self, format: str, *args: Any) -> None:  # silence request logs
        return


@contextmanager
def error_server() -> Iterator[str]:
    """Run a threaded HTTP server on 127.0.0.1 answering everything with 500; yield its URL.

    The server is shut down when the block exits. ``ERROR_MARKER`` is in every body.
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ErrorHandler)
    server.daemon_threads = True
    server.hits = 0  # type: ignore[attr-defined]  # a counter the handler reads
    thread = threading.Thread(target=server.serve_forever, name="kit-500-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Exact cosine similarity (0.0 when either vector is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    """Dot product."""
    return sum(x * y for x, y in zip(a, b, strict=True))


def neg_euclidean(a: Sequence[float], b: Sequence[float]) -> float:
    """Minus the L2 distance (the euclidean ``score`` of the vector store contract)."""
    return -math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))


def error_text(exc: BaseException) -> str:
    """What an error tells the user: ``str(exc)`` plus its structured ``details``."""
    return f"{exc}\n{getattr(exc, 'details', '')!r}"
