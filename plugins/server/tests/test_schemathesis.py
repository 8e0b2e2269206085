"""Schemathesis (4.x, in-process ASGI) over the whole OpenAPI document: every operation,
generated valid and invalid requests, no server error and no response outside the schema.

Bounded: a few dozen examples per operation, no deadline (the machine is shared), about
ten seconds in all. ``SCHEMATHESIS_EXAMPLES`` raises the count for a longer local run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from memoweave_server.app import create_app
from memoweave_server.service import MemoryService
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.python import asgi

from memoweave.config.server import ServerConfig
from memoweave.stores.memory import InMemoryVectorStore

EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "25"))
ADMIN = {"Authorization": "Bearer admin-key-0123456789abcdef"}
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


# The document does not depend on the memory behind the app: the schema is loaded at
# import, and each test gives the app a fresh memory (routes read app.state.service).
# Schemathesis serves ASGI apps from one event loop and runs their lifespan around each
# test; its end closes that test's memory on that loop.
APP = create_app(
    None,  # type: ignore[arg-type]
    ServerConfig(keys=[{"name": "ops", "key": ADMIN["Authorization"][7:], "role": "admin"}]),
    close_on_shutdown=True,
)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@pytest.fixture(autouse=True)
def memory_behind_the_app(tmp_path: Path, onnx_embedder: Any) -> Iterator[None]:
    """A fresh memory with one memory in it."""
    APP.state.service = MemoryService.from_config(
        {"history_db_path": str(tmp_path / "history.db")},
        embedder=onnx_embedder,
        vector_store=InMemoryVectorStore(),
    )
    seed = {"messages": "I live in Lisbon and I play the cello.", "user_id": "alice"}
    with asgi.get_client(APP) as client:
        assert client.post("http://testserver/memories", json=seed, headers=ADMIN).ok
    yield
    asgi.shutdown_lifespans()  # closes the memory (schemathesis may have done it already)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_server_error_and_no_schema_violation(case: Any) -> None:
    case.call_and_validate(headers=ADMIN, checks=CHECKS)
