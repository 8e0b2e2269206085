"""The tenant matrix: key A against the memories of B on every route (0 leaks), grants on
agent ids, admin-only routes, and a server with no key configured."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

Auth = Callable[[str], dict[str, str]]


def _add(client: TestClient, auth: Auth, who: str, text: str, **scope: str) -> str:
    body = {"messages": [{"role": "user", "content": text}], "infer": False, **scope}
    response = client.post("/memories", json=body, headers=auth(who))
    assert response.status_code == 200, response.text
    return response.json()["results"][0]["id"]


def _strip_request_id(response: Any) -> tuple[int, dict[str, Any]]:
    body = dict(response.json())
    body.pop("request_id")
    return response.status_code, body


@pytest.fixture
def bob_memory(client: TestClient, auth: Auth) -> str:
    return _add(client, auth, "bob", "Bob's bank PIN is 4321.", user_id="bob")


def test_by_id_routes_answer_404_for_another_tenants_memory(
    client: TestClient, auth: Auth, bob_memory: str
) -> None:
    """Exactly the answer for an id that does not exist: existence never leaks."""
    ghost = str(uuid.uuid4())
    routes = [
        ("GET", "/memories/{id}", None),
        ("PUT", "/memories/{id}", {"text": "Alice was here."}),
        ("DELETE", "/memories/{id}", None),
        ("GET", "/memories/{id}/history", None),
    ]
    for method, template, body in routes:
        theirs = client.request(
            method, template.format(id=bob_memory), json=body, headers=auth("alice")
        )
        missing = client.request(
            method, template.format(id=ghost), json=body, headers=auth("alice")
        )
        assert theirs.status_code == 404, (method, template, theirs.text)
        _status, body_theirs = _strip_request_id(theirs)
        _, body_missing = _strip_request_id(missing)
        assert body_theirs == {
            **body_missing,
            "message": body_missing["message"].replace(ghost, bob_memory),
        }
        assert "4321" not in theirs.text
        # a scope hint in the query does not open the door either
        sneaky = client.request(
            method,
            template.format(id=bob_memory),
            json=body,
            params={"user_id": "bob"},
            headers=auth("alice"),
        )
        assert sneaky.status_code == 404
    # Bob's memory is untouched, history included
    item = client.get(f"/memories/{bob_memory}", headers=auth("bob")).json()
    assert item["memory"] == "Bob's bank PIN is 4321."
    events = client.get(f"/memories/{bob_memory}/history", headers=auth("bob")).json()
    assert [e["event"] for e in events] == ["ADD"]


def test_scoped_routes_refuse_another_tenants_scope_with_403(
    client: TestClient, auth: Auth, bob_memory: str
) -> None:
    alice = auth("alice")
    attempts = [
        client.get("/memories", params={"user_id": "bob"}, headers=alice),
        client.get(
            "/memories", params={"user_id": "alice", "filters": '{"user_id": "bob"}'}, headers=alice
        ),
        client.get("/memories", params={"filters": '{"user_id": "bob"}'}, headers=alice),
        client.post("/search", json={"query": "PIN", "user_id": "bob"}, headers=alice),
        client.post("/search", json={"query": "PIN", "filters": {"user_id": "bob"}}, headers=alice),
        client.post(
            "/memories", json={"messages": "I am Bob now.", "user_id": "bob"}, headers=alice
        ),
        client.delete("/memories", params={"user_id": "bob"}, headers=alice),
        # no user_id at all: another key's memories would match agent_id alone
        client.get("/memories", params={"agent_id": "shared"}, headers=alice),
        client.post("/search", json={"query": "PIN", "agent_id": "shared"}, headers=alice),
    ]
    for response in attempts:
        assert response.status_code in (400, 403), response.text
        assert "4321" not in response.text
    assert {r.status_code for r in attempts[:1] + attempts[3:]} == {403}
    assert (
        client.get("/memories", params={"user_id": "bob"}, headers=auth("bob")).json()["results"][
            0
        ]["id"]
        == bob_memory
    )


def test_own_scope_reads_return_no_other_tenants_memory(
    client: TestClient, auth: Auth, bob_memory: str
) -> None:
    _add(client, auth, "alice", "Alice's bank PIN is 1234.", user_id="alice")
    hits = client.post(
        "/search", json={"query": "bank PIN", "user_id": "alice"}, headers=auth("alice")
    ).json()["results"]
    assert hits and {h["user_id"] for h in hits} == {"alice"}
    listed = client.get("/memories", params={"user_id": "alice"}, headers=auth("alice")).json()
    assert {m["user_id"] for m in listed["results"]} == {"alice"}


def test_agent_grant_covers_any_agent_but_needs_one(client: TestClient, auth: Auth) -> None:
    mine = _add(client, auth, "agents", "The deploy runs at 9am.", agent_id="planner")
    assert client.get(f"/memories/{mine}", headers=auth("agents")).status_code == 200
    listed = client.get("/memories", params={"agent_id": "other"}, headers=auth("agents"))
    assert listed.status_code == 200 and listed.json()["results"] == []
    no_agent = client.get("/memories", params={"user_id": "alice"}, headers=auth("agents"))
    assert no_agent.status_code == 403 and no_agent.json()["code"] == "forbidden"
    # a user's memory without agent_id is outside this grant
    alices = _add(client, auth, "alice", "Alice likes tea.", user_id="alice")
    assert client.get(f"/memories/{alices}", headers=auth("agents")).status_code == 404


def test_reset_and_unscoped_delete_need_admin(client: TestClient, auth: Auth) -> None:
    kept = _add(client, auth, "alice", "Alice likes tea.", user_id="alice")
    for who in ("alice", "agents"):
        reset = client.post("/reset", headers=auth(who))
        assert reset.status_code == 403 and reset.json()["code"] == "forbidden"
        unscoped = client.delete("/memories", headers=auth(who))
        assert unscoped.status_code == 403
    assert client.get(f"/memories/{kept}", headers=auth("alice")).status_code == 200
    # admin sees every tenant by id, and may reset
    assert client.get(f"/memories/{kept}", headers=auth("admin")).status_code == 200
    assert client.post("/reset", headers=auth("admin")).status_code == 200
    assert client.get(f"/memories/{kept}", headers=auth("alice")).status_code == 404
    again = _add(client, auth, "alice", "Alice likes coffee now.", user_id="alice")
    assert client.delete("/memories", headers=auth("admin")).status_code == 200
    assert client.get(f"/memories/{again}", headers=auth("admin")).status_code == 404


def test_no_keys_configured_means_no_key_needed(make_client: Any) -> None:
    client = make_client(keys=[])
    body = {"messages": "I live in Porto.", "user_id": "carol", "infer": False}
    assert client.post("/memories", json=body).status_code == 200
    assert client.post("/reset").status_code == 200


def test_ids_with_separators_stay_separate(client: TestClient, auth: Auth, make_client: Any):  # type: ignore[no-untyped-def]
    open_client = make_client(keys=[])
    a = _add(open_client, lambda _: {}, "x", "Pipe user fact.", user_id="a|agent_id=b")
    b = _add(open_client, lambda _: {}, "x", "Plain user fact.", user_id="a", agent_id="b")
    listed = open_client.get("/memories", params={"user_id": "a|agent_id=b"}).json()["results"]
    assert [m["id"] for m in listed] == [a]
    listed = open_client.get("/memories", params={"user_id": "a", "agent_id": "b"}).json()
    assert [m["id"] for m in listed["results"]] == [b]


def test_history_reads_only_inside_the_requested_and_granted_scope(
    client: TestClient, auth: Auth
) -> None:
    """The route hands the core the key's pinned scope plus the request's ids: a run's
    memory has no history under another run (404, as an unknown id), nor for a scope the
    key may not name; a deleted memory keeps its history in its own scope."""
    memory = _add(
        client, auth, "alice", "Alice is in Porto this week.", user_id="alice", run_id="r1"
    )
    history = f"/memories/{memory}/history"
    alice = auth("alice")
    assert [e["event"] for e in client.get(history, headers=alice).json()] == ["ADD"]
    assert client.get(history, params={"run_id": "r1"}, headers=alice).status_code == 200
    assert client.get(history, params={"run_id": "r2"}, headers=alice).status_code == 404
    assert client.get(history, params={"user_id": "bob"}, headers=alice).status_code == 404
    assert client.delete(f"/memories/{memory}", headers=alice).status_code == 200
    events = client.get(history, params={"run_id": "r1"}, headers=alice).json()
    assert [e["event"] for e in events] == ["ADD", "DELETE"]
