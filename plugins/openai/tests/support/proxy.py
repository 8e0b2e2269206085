"""A tiny recording HTTP reverse proxy for tests (a real server, not a mock of the plugin).

It forwards every request to ``upstream`` and records what the client sent (method, path,
headers, JSON body). It can also misbehave on purpose: answer the first ``fail_first``
requests with ``fail_status`` and an OpenAI-shaped error body, or wait ``delay`` seconds
before answering (to provoke client timeouts). ``rewrite`` maps request paths (e.g. Azure's
``/openai/deployments/<name>/...`` onto ``/v1/...``).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAILURE_MESSAGE = "proxy-injected failure"


@dataclass
class Recorded:
    """One request as the client sent it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ProxyPlan:
    """How the proxy behaves; mutable between requests."""

    upstream: str
    fail_first: int = 0
    fail_status: int = 500
    fail_headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    rewrite: Callable[[str], str] | None = None


class _Handler(BaseHTTPRequestHandler):
    server: _ProxyServer

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        plan = self.server.plan
        with self.server.lock:
            self.server.requests.append(
                Recorded(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
            )
            number = len(self.server.requests)
        if plan.delay:
            time.sleep(plan.delay)
        if number <= plan.fail_first:
            error = {"error": {"message": f"{FAILURE_MESSAGE} #{number}", "type": "server_error"}}
            self._reply(plan.fail_status, json.dumps(error).encode(), plan.fail_headers)
            return
        path = plan.rewrite(self.path) if plan.rewrite else self.path
        request = urllib.request.Request(
            plan.upstream + path,
            data=raw or None,
            method=self.command,
            headers={"Content-Type": self.headers.get("Content-Type", "application/json")},
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                self._reply(response.status, response.read())
        except urllib.error.HTTPError as exc:
            self._reply(exc.code, exc.read())

    def _reply(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # client gave up (timeout test)
            pass

    do_GET = do_POST = do_PUT = do_DELETE = _handle

    def log_message(self, format: str, *args: Any) -> None:
        return


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, plan: ProxyPlan) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.plan = plan
        self.requests: list[Recorded] = []
        self.lock = threading.Lock()


class RecordingProxy:
    """Context manager running the proxy in a thread; ``url`` is its base URL."""

    def __init__(self, upstream: str, **plan: Any) -> None:
        self._server = _ProxyServer(ProxyPlan(upstream=upstream.rstrip("/"), **plan))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def requests(self) -> list[Recorded]:
        """Requests received so far, in arrival order."""
        with self._server.lock:
            return list(self._server.requests)

    @property
    def plan(self) -> ProxyPlan:
        return self._server.plan

    def __enter__(self) -> RecordingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
