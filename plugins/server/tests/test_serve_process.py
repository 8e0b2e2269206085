"""``memoweave serve`` as a real process on 127.0.0.1 holding the embedded store (Qdrant
Edge + ONNX), with the CLI's ``--server`` mode and ``RemoteMemory`` talking to it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memoweave.cli.main import main
from memoweave.errors import Forbidden, NotFound, ServerError, Unauthorized, ValidationError
from memoweave.remote import RemoteMemory

ALICE_KEY = "alice-key-0123456789abcdef"
ADMIN_KEY = "admin-key-0123456789abcdef"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A running server's URL and its log file."""
    home = tmp_path_factory.mktemp("serve-home")
    config = home / "app.yaml"
    config.write_text(
        "server:\n"
        "  log_format: json\n"
        "  keys:\n"
        '    - {name: alice-app, key: "${ALICE_KEY}", grant: {user_id: [alice]}}\n'
        f"    - {{name: ops, key: {ADMIN_KEY}, role: admin}}\n",
        encoding="utf-8",
    )
    port = _free_port()
    env = {**os.environ, "MEMOWEAVE_HOME": str(home), "ALICE_KEY": ALICE_KEY,
           "HF_HUB_OFFLINE": "1"}  # fmt: skip
    log = (home / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "memoweave.cli.main", "serve", "--config", str(config),
         "--port", str(port)],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(url + "/health", timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((home / "server.log").read_text()) from None
                time.sleep(0.2)
        yield url, home / "server.log"
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@pytest.fixture
def server_url(served: tuple[str, Path]) -> str:
    return served[0]


def _cli(url: str, *args: str, key: str = ALICE_KEY) -> Result:
    env = {"MEMOWEAVE_SERVER": url, "MEMOWEAVE_API_KEY": key}
    return CliRunner(env=env).invoke(main, list(args))


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_cli_commands_run_against_the_server(server_url: str) -> None:
    added = _json(_cli(server_url, "add", "I moved to Lisbon in 2021.", "--user-id", "alice",
                       "--json"))["results"]  # fmt: skip
    assert [a["event"] for a in added] == ["ADD"]
    memory_id = added[0]["id"]
    found = _json(_cli(server_url, "search", "where does she live", "--user-id", "alice",
                       "--json"))["results"]  # fmt: skip
    assert found[0]["id"] == memory_id
    listed = _json(_cli(server_url, "list", "--user-id", "alice", "--json"))["results"]
    assert memory_id in [m["id"] for m in listed]
    item = _json(_cli(server_url, "get", memory_id, "--user-id", "alice", "--json"))
    assert item["memory"] == "I moved to Lisbon in 2021."
    events = _json(_cli(server_url, "history", memory_id, "--json"))
    assert [e["event"] for e in events] == ["ADD"]
    assert _cli(server_url, "delete", memory_id).exit_code == 0
    gone = _cli(server_url, "get", memory_id)
    assert gone.exit_code == 2 and "error[not_found]" in gone.stderr


def test_cli_reports_server_errors_as_typed_errors(server_url: str) -> None:
    refused = _cli(server_url, "list", "--user-id", "bob")
    assert refused.exit_code == 2 and "error[forbidden]" in refused.stderr
    bad_key = _cli(server_url, "list", "--user-id", "alice", key="nope" * 5)
    assert "error[unauthorized]" in bad_key.stderr
    both = CliRunner(env={"MEMOWEAVE_SERVER": server_url}).invoke(
        main, ["list", "--user-id", "alice", "--config", "x.yaml"]
    )
    assert "error[validation_error]" in both.stderr
    down = _cli("http://127.0.0.1:9", "list", "--user-id", "alice")
    assert down.exit_code == 2 and "error[server_error]" in down.stderr


def test_remote_memory_mirrors_memory(server_url: str) -> None:
    alice = RemoteMemory(server_url, api_key=ALICE_KEY)
    (change,) = alice.add("My sister is called Ana.", user_id="alice", infer=False)["results"]
    assert alice.get(change["id"])["memory"] == "My sister is called Ana."
    updated = alice.update(change["id"], "My sister Ana lives in Porto.")
    assert updated["memory"] == "My sister Ana lives in Porto."
    page = alice.get_all(user_id="alice", filters={"user_id": "alice"}, top_k=5)
    assert change["id"] in [m["id"] for m in page["results"]]
    with pytest.raises(Forbidden):
        alice.search("sister", user_id="bob")
    with pytest.raises(Forbidden):
        alice.reset()
    with pytest.raises(ValidationError):
        alice.search("", user_id="alice")
    with pytest.raises(ValidationError):
        alice.get("not-a-uuid")
    with pytest.raises(Unauthorized):
        RemoteMemory(server_url).get_all(user_id="alice")
    admin = RemoteMemory(server_url, api_key=ADMIN_KEY)
    assert admin.get(change["id"])["user_id"] == "alice"
    assert alice.delete_all(user_id="alice")["message"]
    assert alice.get(change["id"]) is None
    with pytest.raises(NotFound):
        alice.delete(change["id"])
    with pytest.raises(ValidationError):
        RemoteMemory("ftp://example")
    with pytest.raises(ServerError):
        RemoteMemory("http://127.0.0.1:9").get_all(user_id="alice")
    assert ALICE_KEY not in repr(alice)


def test_the_server_logs_one_json_line_per_request_without_keys(served: tuple[str, Path]) -> None:
    url, log_path = served
    before = len(log_path.read_text().splitlines())
    _cli(url, "list", "--user-id", "alice")
    _cli(url, "list", "--user-id", "bob")
    deadline = time.monotonic() + 10  # the line is written just after the response is sent
    while len(lines := log_path.read_text().splitlines()) < before + 2:
        assert time.monotonic() < deadline, lines
        time.sleep(0.05)
    requests = [json.loads(x) for x in lines if x.startswith("{")]
    assert len(requests) >= 2 and {r["status"] for r in requests[-2:]} == {200, 403}
    assert all(r["request_id"] and r["key"] == "alice-app" for r in requests[-2:])
    assert not any(ALICE_KEY in x or ADMIN_KEY in x for x in lines)
