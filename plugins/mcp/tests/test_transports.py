"""``memoweave mcp`` as real processes: over stdio (as Claude Desktop or Cursor start it)
and over streamable HTTP on 127.0.0.1 behind the server's API keys."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio
ALICE_KEY = "alice-key-0123456789abcdef"
BOB_KEY = "bob-key-0123456789abcdef"


def _config(home: Path) -> Path:
    path = home / "app.yaml"
    path.write_text(
        "vector_store: {provider: memory}\n"
        "embedder: {provider: onnx}\n"
        f"history_db_path: {json.dumps(str(home / 'history.db'))}\n"
        "server:\n"
        "  keys:\n"
        f"    - {{name: alice-agent, key: {ALICE_KEY}, grant: {{user_id: [alice]}}}}\n"
        f"    - {{name: bob-agent, key: {BOB_KEY}, grant: {{user_id: [bob]}}}}\n",
        encoding="utf-8",
    )
    return path


async def test_stdio_subprocess(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memoweave.cli.main", "mcp", "--config", str(_config(tmp_path)),
              "--user-id", "alice"],
        env={"MEMOWEAVE_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    async with Client(params) as client:
        assert "add_memory" in {t.name for t in (await client.list_tools()).tools}
        added = await client.call_tool("add_memory", {"text": "I keep bees on my roof."})
        assert not added.is_error, added.content
        found = await client.call_tool("search_memories", {"query": "bees"})
        assert found.structured_content["results"][0]["memory"] == "I keep bees on my roof."


def test_rerank_without_a_reranker_is_refused_before_serving(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from memoweave.cli.main import main

    args = ["mcp", "--config", str(_config(tmp_path)), "--user-id", "alice", "--rerank"]
    result = CliRunner().invoke(main, args, env={"MEMOWEAVE_HOME": str(tmp_path)})
    assert result.exit_code != 0
    assert "no reranker configured" in result.output and "reranker section" in result.output


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def http_url(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    log = (tmp_path / "mcp.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "memoweave.cli.main", "mcp", "--transport", "http",
         "--config", str(_config(tmp_path)), "--port", str(port)],
        env={**os.environ, "MEMOWEAVE_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"},
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url, timeout=1)
            except urllib.error.HTTPError:
                break  # it answers (401 without a key)
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((tmp_path / "mcp.log").read_text()) from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


async def _session_call(url: str, key: str, tool: str, args: dict[str, Any]) -> Any:
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return await client.call_tool(tool, args)


async def test_streamable_http_uses_the_keys_and_grants(http_url: str) -> None:
    request = urllib.request.Request(http_url, data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 401
    assert json.loads(refused.value.read())["code"] == "unauthorized"

    added = await _session_call(http_url, ALICE_KEY, "add_memory",
                                {"text": "Alice's locker code is 2468."})  # fmt: skip
    assert not added.is_error, added.content
    memory_id = added.structured_content["changes"][0]["id"]
    mine = await _session_call(http_url, ALICE_KEY, "search_memories", {"query": "locker code"})
    assert [h["id"] for h in mine.structured_content["results"]] == [memory_id]
    theirs = await _session_call(http_url, BOB_KEY, "search_memories", {"query": "locker code"})
    assert theirs.structured_content["results"] == []
    stolen = await _session_call(http_url, BOB_KEY, "get_memory", {"memory_id": memory_id})
    assert stolen.is_error and "2468" not in str(stolen.content)
