"""Request logs, error mapping, the 500 guard, the bind rule and the CLI commands."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from fastapi.testclient import TestClient
from memoweave_server.errors import status_of
from memoweave_server.observe import LOGGER_NAME, RequestLog
from memoweave_server.run import bind_host

from memoweave.access import KeyRing
from memoweave.cli.main import main
from memoweave.config import MemoryConfig
from memoweave.config.server import ApiKeyConfig
from memoweave.errors import (
    EmbeddingError,
    FilterError,
    Forbidden,
    HistoryError,
    LLMError,
    NotFound,
    Unauthorized,
    ValidationError,
)

Auth = Callable[[str], dict[str, str]]


def test_one_json_log_line_per_request_without_secrets(
    make_client: Any, auth: Auth, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client(log_format="json")
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    client.get(
        "/memories",
        params={"user_id": "alice", "filters": '{"secret": 1}'},
        headers={**auth("alice"), "X-Request-ID": "r-1"},
    )
    client.get("/memories", params={"user_id": "alice"}, headers={"X-API-Key": "wrong" * 5})
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == LOGGER_NAME]
    assert len(lines) == 2
    first, second = lines
    assert first["request_id"] == "r-1" and first["method"] == "GET"
    assert first["path"] == "/memories" and first["status"] == 200
    assert first["key"] == "alice-app" and first["ms"] >= 0
    assert second["status"] == 401 and second["key"] is None
    text = caplog.text
    assert "alice-key" not in text and "wrong" not in text and "secret" not in text


def test_text_log_format(make_client: Any, caplog: pytest.LogCaptureFixture) -> None:
    client = make_client(keys=[])
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    client.get("/health", headers={"X-Request-ID": "abc"})
    (line,) = [r.getMessage() for r in caplog.records if r.name == LOGGER_NAME]
    assert "request_id=abc method=GET path=/health status=200" in line and "key=local" not in line


def test_error_classes_map_to_4xx() -> None:
    assert status_of(ValidationError("x")) == 400
    assert status_of(FilterError("x")) == 400
    assert status_of(Unauthorized("x")) == 401
    assert status_of(Forbidden("x")) == 403
    assert status_of(NotFound("x")) == 404
    for provider_failure in (LLMError("x"), EmbeddingError("x"), HistoryError("x")):
        assert status_of(provider_failure) == 424


def test_provider_failure_is_424_with_hint(make_client: Any, auth: Auth, onnx_embedder) -> None:  # type: ignore[no-untyped-def]
    client = make_client()
    original = onnx_embedder.embed

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise EmbeddingError("the embedding server answered 503")

    onnx_embedder.embed = broken
    try:
        response = client.post(
            "/search", json={"query": "x", "user_id": "alice"}, headers=auth("alice")
        )
    finally:
        onnx_embedder.embed = original
    assert response.status_code == 424
    assert response.json()["code"] == "embedding_error" and response.json()["hint"]


def test_unexpected_exception_is_a_json_500_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def crashing_app(scope: Any, receive: Any, send: Any) -> None:
        raise RuntimeError("token=abc123 leaked?")

    client = TestClient(RequestLog(crashing_app), raise_server_exceptions=False)
    caplog.set_level(logging.INFO, logger=LOGGER_NAME)
    response = client.get("/anything")
    assert response.status_code == 500
    body = response.json()
    assert body["code"] == "internal_error" and "abc123" not in response.text
    assert body["request_id"] == response.headers["X-Request-ID"]
    assert any(r.exc_info for r in caplog.records)  # the traceback is in the server log


def test_no_key_binds_loopback_only_and_says_so() -> None:
    open_ring = KeyRing()
    assert bind_host("0.0.0.0", open_ring)[0] == "127.0.0.1"
    assert "not 0.0.0.0" in (bind_host("0.0.0.0", open_ring)[1] or "")
    assert bind_host("127.0.0.1", open_ring)[1] is not None
    keyed = KeyRing([ApiKeyConfig(name="k", key="k" * 20, role="admin")])
    assert bind_host("0.0.0.0", keyed) == ("0.0.0.0", None)


def test_serve_and_new_key_commands_are_plugged_in() -> None:
    runner = CliRunner()
    listing = runner.invoke(main, ["plugins", "--json"])
    assert listing.exit_code == 0, listing.output
    commands = {c["name"]: c["distribution"] for c in json.loads(listing.stdout)["commands"]}
    assert commands["serve"] == "memoweave-server" and commands["new-key"] == "memoweave-server"
    assert "serve" in runner.invoke(main, ["--help"]).output


def test_new_key_prints_a_config_entry_that_authenticates_the_key() -> None:
    result = CliRunner().invoke(
        main, ["new-key", "--name", "mobile", "--user-id", "alice", "--agent-id", "*"]
    )
    assert result.exit_code == 0, result.output
    key = result.stderr.rsplit(" ", 1)[-1].strip()
    config = MemoryConfig.from_dict(yaml.safe_load(result.stdout))
    principal = KeyRing.from_config(config.server).authenticate(key)
    assert principal.name == "mobile" and principal.role == "member"
    assert principal.grant == {"user_id": frozenset({"alice"}), "agent_id": None}
    assert key not in result.stdout
