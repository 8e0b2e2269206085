"""A local server speaking the Ollama HTTP protocol, backed by llama.cpp models (tests only).

Endpoints (Ollama's request and response shapes, errors as ``{"error": "..."}``):

- ``POST /api/chat`` (non-streaming only; ``"stream": true`` or absent is a 400: the
  plugin never streams): ``format`` ``"json"`` or a JSON schema is enforced by a llama.cpp
  grammar; ``tools`` make the model answer with one grammar-constrained tool call (real
  Ollama lets the model choose); ``images`` on a non-vision model is a 400 with Ollama's
  message; ``options.num_predict`` (default 128 here, unlimited in Ollama), temperature,
  top_p / top_k / repeat_penalty (Ollama's defaults 0.9 / 40 / 1.1 when absent), seed,
  stop; an empty ``messages`` list answers ``done_reason: "load"``.
- ``POST /api/embed`` (``input`` str or list, ``truncate``, ``dimensions``; L2-normalised),
  ``POST /api/embeddings`` (legacy, ``prompt``, raw vector), ``GET /api/tags``,
  ``POST /api/show``, ``GET /api/ps``, ``GET /api/version``, ``GET /``.
- unknown model: 404 ``model "x" not found, try pulling it first``; model names without a
  tag mean ``:latest``.

Test hooks: :meth:`OllamaTestServer.inject` makes the next requests fail with a status and
message, :meth:`OllamaTestServer.delay` makes them slow; ``requests`` records every
``(method, path, body)``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .backends import JSON_OBJECT_GBNF, ChatBackend, EmbedBackend

VERSION = "0.12.6"
DEFAULT_NUM_PREDICT = 128


class ApiError(Exception):
    """An Ollama error answer: ``status`` and ``{"error": message}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Fault:
    """One injected failure (``status`` > 0) or slowdown (``delay`` seconds)."""

    status: int = 0
    message: str = ""
    delay: float = 0.0


def full_name(name: str) -> str:
    """``all-minilm`` → ``all-minilm:latest``."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def _tool_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The schema of one call of any of ``tools``: ``{"name": ..., "arguments": {...}}``."""
    variants = []
    for tool in tools:
        function = tool.get("function") or {}
        params = function.get("parameters") or {"type": "object"}
        variants.append(
            {
                "type": "object",
                "properties": {"name": {"const": function.get("name")}, "arguments": params},
                "required": ["name", "arguments"],
            }
        )
    return variants[0] if len(variants) == 1 else {"anyOf": variants}


class OllamaTestServer:
    """The server on 127.0.0.1 (free port); ``url`` has no path. Use as a context manager."""

    def __init__(self, models: dict[str, ChatBackend | EmbedBackend]) -> None:
        self.models = {full_name(name): backend for name, backend in models.items()}
        self.requests: list[tuple[str, str, Any]] = []
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"app": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> OllamaTestServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)

    def inject(self, status: int, message: str, times: int = 1, delay: float = 0.0) -> None:
        """The next ``times`` requests answer ``status`` with ``{"error": message}``.

        With ``delay``, each waits that long first (a timeout that costs no model call).
        """
        fault = Fault(status=status, message=message, delay=delay)
        with self._lock:
            self._faults.extend(fault for _ in range(times))

    def delay(self, seconds: float, times: int = 1) -> None:
        """The next ``times`` requests wait ``seconds`` before being handled."""
        with self._lock:
            self._faults.extend(Fault(delay=seconds) for _ in range(times))

    def calls(self, path: str) -> list[Any]:
        """Bodies of the recorded requests to ``path``."""
        return [body for _, p, body in self.requests if p == path]

    # -- dispatch ---------------------------------------------------------------------

    def handle(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        with self._lock:
            self.requests.append((method, path, body))
            fault = self._faults.popleft() if self._faults else None
        if fault is not None and fault.delay:
            time.sleep(fault.delay)
        if fault is not None and fault.status:
            raise ApiError(fault.status, fault.message)
        routes = {
            ("POST", "/api/chat"): self._chat,
            ("POST", "/api/embed"): self._embed,
            ("POST", "/api/embeddings"): self._embeddings,
            ("POST", "/api/show"): self._show,
            ("GET", "/api/tags"): lambda _: {"models": [self._entry(n) for n in self.models]},
            ("GET", "/api/ps"): lambda _: {"models": [self._entry(n) for n in self.models]},
            ("GET", "/api/version"): lambda _: {"version": VERSION},
            ("GET", "/"): lambda _: "Ollama is running",
        }
        route = routes.get((method, path))
        if route is None:
            return 404, "404 page not found"
        if method == "POST" and not isinstance(body, dict):
            raise ApiError(400, "invalid request body: expected a JSON object")
        return 200, route(body)

    def _model(self, body: dict[str, Any], kind: type) -> tuple[str, Any]:
        name = body.get("model") or body.get("name")
        if not isinstance(name, str) or not name:
            raise ApiError(400, "model is required")
        backend = self.models.get(full_name(name))
        if backend is None:
            raise ApiError(404, f'model "{name}" not found, try pulling it first')
        if not isinstance(backend, kind):
            what = "chat" if kind is ChatBackend else "embeddings"
            raise ApiError(400, f'"{name}" does not support {what}')
        return name, backend

    def _entry(self, name: str) -> dict[str, Any]:
        backend = self.models[name]
        return {
            "name": name,
            "model": name,
            "modified_at": _now(),
            "size": 0,
            "digest": f"{abs(hash(name)):064x}"[:64],
            "details": self._details(backend),
        }

    @staticmethod
    def _details(backend: Any) -> dict[str, Any]:
        return {
            "format": "gguf",
            "family": backend.family,
            "families": [backend.family],
            "parameter_size": backend.parameter_size,
            "quantization_level": backend.quantization,
        }

    def _show(self, body: dict[str, Any]) -> dict[str, Any]:
        name, backend = self._model(body, object)
        chat = isinstance(backend, ChatBackend)
        return {
            "modelfile": f"FROM {name}",
            "parameters": "",
            "template": "{{ .Prompt }}",
            "details": self._details(backend),
            "model_info": {
                "general.architecture": backend.family,
                f"{backend.family}.context_length": backend.context_length,
            },
            "capabilities": ["completion", "tools"] if chat else ["embedding"],
            "modified_at": _now(),
        }

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter_ns()
        name, backend = self._model(body, ChatBackend)
        if body.get("stream", True):
            raise ApiError(400, "this test server does not stream; send stream: false")
        messages = body.get("messages") or []
        if not isinstance(messages, list):
            raise ApiError(400, "messages must be a list")
        if not messages:
            done = {"role": "assistant", "content": ""}
            return {"model": name, "created_at": _now(), "message": done, "done_reason": "load",
                    "done": True}  # fmt: skip
        chat: list[dict[str, Any]] = []
        for message in messages:
            if not isinstance(message, dict) or message.get("role") not in (
                "system", "user", "assistant", "tool",
            ):  # fmt: skip
                raise ApiError(400, f"invalid message: {message!r}")
            if message.get("images"):
                raise ApiError(400, "this model is missing data required for image input")
            chat.append({"role": message["role"], "content": message.get("content") or ""})
        options = body.get("options") or {}
        fmt = body.get("format")
        tools = body.get("tools") or []
        schema = fmt if isinstance(fmt, dict) else (_tool_schema(tools) if tools else None)
        if fmt not in (None, "", "json") and not isinstance(fmt, dict):
            raise ApiError(400, f"invalid format: {fmt!r}")
        predict = options.get("num_predict")
        max_tokens = DEFAULT_NUM_PREDICT if predict in (None, -1, -2) else int(predict)
        result = backend.chat(
            chat,
            grammar_text=JSON_OBJECT_GBNF if fmt == "json" else None,
            schema=schema,
            options=options,
            max_tokens=max_tokens,
        )
        choice = result["choices"][0]
        text = choice["message"].get("content") or ""
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if tools and not isinstance(fmt, dict):
            try:
                call = json.loads(text)
                function = {"name": call["name"], "arguments": call["arguments"]}
                message = {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"function": function}],
                }
            except (json.JSONDecodeError, KeyError, TypeError):
                pass  # an unparsable call stays text, as in Ollama
        usage = result.get("usage") or {}
        total = time.perf_counter_ns() - started
        return {
            "model": name,
            "created_at": _now(),
            "message": message,
            "done": True,
            "done_reason": "length" if choice.get("finish_reason") == "length" else "stop",
            "total_duration": total,
            "load_duration": 0,
            "prompt_eval_count": int(usage.get("prompt_tokens", 0)),
            "prompt_eval_duration": total // 4,
            "eval_count": int(usage.get("completion_tokens", 0)),
            "eval_duration": total - total // 4,
        }

    def _embed(self, body: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter_ns()
        name, backend = self._model(body, EmbedBackend)
        raw = body.get("input", [])
        texts = [raw] if isinstance(raw, str) else raw
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ApiError(400, "invalid input type")
        dimensions = body.get("dimensions")
        if dimensions is not None and (not isinstance(dimensions, int) or dimensions < 1):
            raise ApiError(400, "dimensions must be a positive integer")
        counts = [backend.token_count(t) for t in texts]
        if body.get("truncate") is False and any(c > backend.context_length for c in counts):
            raise ApiError(400, "the input length exceeds the context length")
        vectors = backend.embed(texts, normalize=True, dimensions=dimensions) if texts else []
        return {
            "model": name,
            "embeddings": vectors,
            "total_duration": time.perf_counter_ns() - started,
            "load_duration": 0,
            "prompt_eval_count": sum(min(c, backend.context_length) for c in counts),
        }

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        _, backend = self._model(body, EmbedBackend)
        prompt = body.get("prompt") or ""
        if not isinstance(prompt, str):
            raise ApiError(400, "prompt must be a string")
        return {"embedding": backend.embed([prompt], normalize=False)[0] if prompt else []}


class _Handler(BaseHTTPRequestHandler):
    app: OllamaTestServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._serve("GET")

    def do_HEAD(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            try:
                body = json.loads(raw) if raw else None
            except json.JSONDecodeError as exc:
                raise ApiError(400, f"invalid character in request body: {exc}") from exc
            status, payload = self.app.handle(method, self.path.split("?", 1)[0], body)
        except ApiError as exc:
            status, payload = exc.status, {"error": exc.message}
        except Exception as exc:  # a backend failure is an Ollama 500
            status, payload = 500, {"error": f"{type(exc).__name__}: {exc}"}
        if isinstance(payload, str):
            data, kind = payload.encode(), "text/plain; charset=utf-8"
        else:
            data, kind = json.dumps(payload).encode(), "application/json; charset=utf-8"
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the request log."""
