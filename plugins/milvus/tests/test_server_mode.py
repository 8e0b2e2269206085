"""Server mode (``uri: http://...``) against a real gRPC Milvus endpoint started by the test.

No Milvus server runs in CI, so the endpoint is Milvus Lite's standalone gRPC server
(``python -m milvus_lite server``), which speaks the Milvus protocol: this exercises the
server code path (no Lite file lock, HNSW default index, version probe, databases).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoweave.plugins import load_registry
from memoweave.testing import AsyncVectorStoreConformance, VectorStoreConformance


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def milvus_grpc_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    data = tmp_path_factory.mktemp("milvus_server") / "data"
    command = [sys.executable, "-m", "milvus_lite", "server", "--data-dir", str(data)]
    proc = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"milvus_lite server exited: {proc.stderr.read().decode()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _fresh_database(url: str) -> str:
    """A new, empty Milvus database on the server (one per test)."""
    from pymilvus import MilvusClient

    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = MilvusClient(uri=url)
    try:
        admin.create_database(name)
    finally:
        admin.close()
    return name


class TestMilvusServerConformance(VectorStoreConformance):
    @pytest.fixture
    def store_factory(self, milvus_grpc_url: str):
        config = {"uri": milvus_grpc_url, "db_name": _fresh_database(milvus_grpc_url)}
        return lambda: load_registry().create("vector_store", "milvus", config)


class TestMilvusServerAsyncConformance(AsyncVectorStoreConformance):
    """Through the async twins: AsyncMilvusClient on the gRPC endpoint."""

    @pytest.fixture
    def async_store_factory(self, milvus_grpc_url: str):
        config = {"uri": milvus_grpc_url, "db_name": _fresh_database(milvus_grpc_url)}
        return lambda: load_registry().create("vector_store", "milvus", config)


def test_server_mode_defaults(milvus_grpc_url: str, tmp_path: Path) -> None:
    config = {"uri": milvus_grpc_url, "db_name": _fresh_database(milvus_grpc_url)}
    store = load_registry().create("vector_store", "milvus", config)
    other = load_registry().create("vector_store", "milvus", config)  # no file lock
    try:
        store.ensure_collection("defaults", 4, "dot")
        other.ensure_collection("defaults", 4, "dot")
        assert store.capabilities.keyword_search and store.capabilities.persistent
        from memoweave.providers.vector_store import VectorRecord

        store.upsert([VectorRecord(str(uuid.uuid4()), [1.0, 2.0, 3.0, 4.0], {"memory": "hi"})])
        assert other.count() == 1
        from pymilvus import MilvusClient

        raw = MilvusClient(uri=milvus_grpc_url, db_name=config["db_name"])
        try:
            assert raw.describe_index("defaults", index_name="vector")["index_type"] == "HNSW"
        finally:
            raw.close()
    finally:
        store.close()
        other.close()
