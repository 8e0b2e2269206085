"""Every route of the REST server, in process, with the happy path and its errors."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi.testclient import TestClient

ALICE = {"Authorization": "Bearer alice-key-0123456789abcdef"}


def _add(client: TestClient, text: str, user: str = "alice", **extra: object) -> dict:
    response = client.post(
        "/memories",
        json={"messages": [{"role": "user", "content": text}], "user_id": user, **extra},
        headers={"Authorization": f"Bearer {user}-key-0123456789abcdef"},
    )
    assert response.status_code == 200, response.text
    (change,) = response.json()["results"]
    return change


def test_health_version_and_docs_need_no_key(client: TestClient) -> None:
    assert client.get("/health").json() == {"status": "ok"}
    assert set(client.get("/version").json()) == {"memoweave", "server"}
    spec = client.get("/openapi.json").json()
    assert {
        "/memories",
        "/memories/{memory_id}",
        "/memories/{memory_id}/history",
        "/search",
        "/reset",
        "/health",
        "/version",
    } <= set(spec["paths"])
    assert client.get("/docs").status_code == 200


def test_add_get_list_search_update_history_delete(client: TestClient) -> None:
    added = _add(client, "I moved to Berlin in May 2023.", metadata={"topic": "home"})
    assert added["event"] == "ADD" and added["memory"] == "I moved to Berlin in May 2023."
    memory_id = added["id"]

    item = client.get(f"/memories/{memory_id}", headers=ALICE).json()
    assert item["user_id"] == "alice" and item["metadata"] == {"topic": "home"}

    page = client.get("/memories", params={"user_id": "alice"}, headers=ALICE).json()
    assert [m["id"] for m in page["results"]] == [memory_id] and page["next_cursor"] is None
    filtered = client.get(
        "/memories", params={"user_id": "alice", "filters": '{"topic": "work"}'}, headers=ALICE
    ).json()
    assert filtered["results"] == []

    _add(client, "My favourite food is grilled sardines.")
    found = client.post(
        "/search", json={"query": "where does she live", "user_id": "alice"}, headers=ALICE
    ).json()["results"]
    assert found[0]["id"] == memory_id and found[0]["score"] >= found[-1]["score"]
    by_filter = client.post(
        "/search",
        json={"query": "Berlin", "filters": {"user_id": "alice"}, "top_k": 1},
        headers=ALICE,
    ).json()["results"]
    assert [h["id"] for h in by_filter] == [memory_id]

    updated = client.put(
        f"/memories/{memory_id}", json={"text": "I live in Berlin since May 2023."}, headers=ALICE
    ).json()
    assert updated["memory"] == "I live in Berlin since May 2023." and updated["message"]

    events = client.get(f"/memories/{memory_id}/history", headers=ALICE).json()
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]

    assert client.delete(f"/memories/{memory_id}", headers=ALICE).json()["message"]
    assert client.get(f"/memories/{memory_id}", headers=ALICE).status_code == 404
    events = client.get(f"/memories/{memory_id}/history", headers=ALICE).json()
    assert events[-1]["event"] == "DELETE"


def test_delete_all_of_a_scope(client: TestClient) -> None:
    _add(client, "I play the cello.")
    _add(client, "I work as a nurse.")
    response = client.delete("/memories", params={"user_id": "alice"}, headers=ALICE)
    assert response.status_code == 200
    assert (
        client.get("/memories", params={"user_id": "alice"}, headers=ALICE).json()["results"] == []
    )


def test_missing_and_bad_keys_are_401(client: TestClient) -> None:
    for headers in (
        {},
        {"Authorization": "Bearer nope-nope-nope-nope"},
        {"X-API-Key": "x" * 20},
        {"Authorization": "Basic YWxpY2U6cHc="},
    ):
        response = client.get("/memories", params={"user_id": "alice"}, headers=headers)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"] == "Bearer"
        body = response.json()
        assert body["code"] == "unauthorized" and body["hint"]
        assert "nope" not in response.text and "YWxp" not in response.text
    ok = client.get(
        "/memories",
        params={"user_id": "alice"},
        headers={"X-API-Key": ALICE["Authorization"].removeprefix("Bearer ")},
    )
    assert ok.status_code == 200


def test_request_id_is_echoed_or_made(client: TestClient) -> None:
    response = client.get("/memories/not-a-uuid", headers={**ALICE, "X-Request-ID": "req-42"})
    assert response.headers["X-Request-ID"] == "req-42"
    assert response.json()["request_id"] == "req-42"
    unsafe = client.get("/health", headers={"X-Request-ID": "a b\tc"})
    assert unsafe.headers["X-Request-ID"] != "a b\tc" and len(unsafe.headers["X-Request-ID"]) == 32


def test_validation_errors_name_the_field(client: TestClient) -> None:
    missing = client.post("/memories", json={"user_id": "alice"}, headers=ALICE)
    assert missing.status_code == 422
    assert missing.json()["code"] == "validation_error"
    assert missing.json()["field"] == "body.messages"
    bad_type = client.post(
        "/search", json={"query": "x", "user_id": "alice", "top_k": "many"}, headers=ALICE
    )
    assert bad_type.status_code == 422 and bad_type.json()["field"] == "body.top_k"
    not_json = client.post(
        "/search", content=b"{", headers={**ALICE, "Content-Type": "application/json"}
    )
    assert not_json.status_code == 422


def test_core_validation_errors_are_400_with_a_hint(client: TestClient) -> None:
    cases = [
        ("GET", "/memories/not-a-uuid", None, None),
        (
            "POST",
            "/memories",
            {"messages": "hi", "user_id": "alice", "metadata": {"user_id": "x"}},
            None,
        ),
        (
            "POST",
            "/memories",
            {"messages": [{"role": "robot", "content": "hi"}], "user_id": "alice"},
            None,
        ),
        ("GET", "/memories", None, {"user_id": "alice", "filters": "{nope"}),
        ("GET", "/memories", None, {"user_id": "alice", "filters": "[1]"}),
        (
            "POST",
            "/search",
            {"query": "x", "user_id": "alice", "filters": {"topic": {"zz": 1}}},
            None,
        ),
        ("PUT", f"/memories/{uuid.uuid4()}", {}, None),
    ]
    for method, path, body, params in cases:
        response = client.request(method, path, json=body, params=params, headers=ALICE)
        if path.startswith("/memories/") and method == "PUT":
            assert response.status_code == 404  # unknown id: checked before the body
            continue
        assert response.status_code == 400, (method, path, response.text)
        payload = response.json()
        assert set(payload) >= {"code", "message", "hint", "request_id"}
        assert payload["code"] in ("validation_error", "invalid_filter")


def test_update_with_nothing_to_change_is_400(client: TestClient) -> None:
    memory_id = _add(client, "I drive a red bicycle.")["id"]
    response = client.put(f"/memories/{memory_id}", json={}, headers=ALICE)
    assert response.status_code == 400 and response.json()["code"] == "validation_error"


def test_unknown_route_and_method_are_json(client: TestClient) -> None:
    missing = client.get("/nowhere")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    wrong = client.patch("/memories")
    assert wrong.status_code == 405 and wrong.json()["code"] == "method_not_allowed"
    assert "GET" in wrong.headers["allow"]


def test_oversized_body_is_413(client: TestClient) -> None:
    huge = b'{"query": "' + b"x" * (5 * 1024 * 1024) + b'"}'
    response = client.post(
        "/search", content=huge, headers={**ALICE, "Content-Type": "application/json"}
    )
    assert response.status_code == 413 and response.json()["code"] == "payload_too_large"

    def chunks():  # no Content-Length: the limit applies to the bytes as they arrive
        yield b'{"query": "'
        for _ in range(6):
            yield b"x" * (1024 * 1024)
        yield b'"}'

    chunked = client.post(
        "/search", content=chunks(), headers={**ALICE, "Content-Type": "application/json"}
    )
    assert chunked.status_code == 413 and chunked.json()["code"] == "payload_too_large"


def test_cors_preflight_for_configured_origins(make_client) -> None:  # type: ignore[no-untyped-def]
    client = make_client(cors_origins=["https://app.example.com"])
    response = client.options(
        "/search",
        headers={
            "Origin": "https://app.example.com",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type",
        },
    )
    assert response.status_code == 200
    assert response.headers["access-control-allow-origin"] == "https://app.example.com"
    other = client.get("/health", headers={"Origin": "https://evil.example.com"})
    assert "access-control-allow-origin" not in other.headers


def test_search_returns_relations_only_with_a_graph_store(make_client: Any) -> None:
    graphed = make_client(memory={"graph_store": {"provider": "memory"}})
    linked = _add(graphed, "Caroline went hiking with Melanie.", infer=False)["id"]
    _add(graphed, "Bob went hiking with Melanie.", user="bob", infer=False)
    body = graphed.post(
        "/search", json={"query": "What does Caroline do?", "user_id": "alice"}, headers=ALICE
    ).json()
    assert body["relations"] == [
        {
            "source": "caroline",
            "relationship": "co_mentioned",
            "destination": "melanie",
            "hop": 1,
            "memory_ids": [linked],
        }
    ]
    bobs = graphed.post(
        "/search",
        json={"query": "What does Caroline do?", "user_id": "bob"},
        headers={"Authorization": "Bearer bob-key-0123456789abcdef"},
    ).json()
    assert bobs["relations"] == [], "another tenant's relations must not be reached"

    plain = make_client()
    _add(plain, "Caroline went hiking with Melanie.", infer=False)
    answer = plain.post("/search", json={"query": "Caroline", "user_id": "alice"}, headers=ALICE)
    assert "relations" not in answer.json()
