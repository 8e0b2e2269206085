"""Fixtures of the REST server tests: the real app in process (FastAPI's httpx-based
TestClient) on the core's memory store, a SQLite history and the real ONNX embedder (the
kit's session fixture ``onnx_embedder``, :mod:`memoweave.testing.local_embedder`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from memoweave_server.app import create_app
from memoweave_server.service import MemoryService

from memoweave.config.server import ServerConfig
from memoweave.stores.memory import InMemoryVectorStore

KEYS = {
    "alice": "alice-key-0123456789abcdef",
    "bob": "bob-key-0123456789abcdef",
    "agents": "agents-key-0123456789abcdef",
    "admin": "admin-key-0123456789abcdef",
}
KEY_CONFIG = [
    {"name": "alice-app", "key": KEYS["alice"], "grant": {"user_id": ["alice"]}},
    {"name": "bob-app", "key": KEYS["bob"], "grant": {"user_id": ["bob"]}},
    {"name": "agents", "key": KEYS["agents"], "grant": {"agent_id": "*"}},
    {"name": "ops", "key": KEYS["admin"], "role": "admin"},
]

MakeClient = Callable[..., TestClient]


def _auth(who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[who]}"}


@pytest.fixture(scope="session")
def auth() -> Callable[[str], dict[str, str]]:
    """``auth("alice")``: the Authorization header of one of the test keys
    (alice, bob, agents, admin)."""
    return _auth


@pytest.fixture
def make_client(tmp_path: Path, onnx_embedder: Any) -> Iterator[MakeClient]:
    """Build an app (``keys``: the ``server.keys`` list, default the four test keys;
    ``memory``: more of the memory's config) and
    return an in-process client, started: one event loop serves it, and stopping it
    (afterwards) closes its memory on that loop."""
    clients: list[TestClient] = []

    def make(
        keys: list[dict[str, Any]] | None = None,
        memory: dict[str, Any] | None = None,
        **server: Any,
    ) -> TestClient:
        config = {"history_db_path": str(tmp_path / f"history{len(clients)}.db"), **(memory or {})}
        service = MemoryService.from_config(
            config, embedder=onnx_embedder, vector_store=InMemoryVectorStore()
        )
        settings = ServerConfig(keys=KEY_CONFIG if keys is None else keys, **server)
        app = create_app(service, settings, close_on_shutdown=True)
        client = TestClient(app, raise_server_exceptions=False)
        clients.append(client)
        return client.__enter__()

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: MakeClient) -> TestClient:
    """An app with the four test keys."""
    return make_client()
