"""Milvus-specific behaviour on a real Milvus Lite engine: locking, reopening, big batches,
long texts, configuration and error mapping."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from memoweave_milvus.schema import TEXT_MAX_BYTES

from memoweave.errors import ConfigError, ValidationError, VectorStoreError
from memoweave.filters import parse_filter
from memoweave.plugins import load_registry
from memoweave.providers.vector_store import VectorRecord, VectorStore

DIMS = 8


def _open(path: Path, **config: object) -> VectorStore:
    return load_registry().create("vector_store", "milvus", {"uri": str(path), **config})


def _vec(i: int) -> list[float]:
    return [((i * 7 + k * 13) % 17) / 17 + 0.01 for k in range(DIMS)]


def _rec(i: int, **payload: object) -> VectorRecord:
    return VectorRecord(str(uuid.UUID(int=i + 1)), _vec(i), {"i": i, **payload})


@pytest.fixture
def milvus_store(tmp_path: Path):
    store = _open(tmp_path / "own.db")
    store.ensure_collection("own", DIMS, "cosine")
    yield store
    store.close()


_CHILD = textwrap.dedent(
    """
    import json, sys, warnings
    warnings.simplefilter("ignore")
    from memoweave.errors import MemoweaveError
    from memoweave.plugins import load_registry
    try:
        store = load_registry().create("vector_store", "milvus", {"uri": sys.argv[1]})
        store.ensure_collection("shared", 8, "cosine")
        print(json.dumps({"count": store.count()}))
        store.close()
    except MemoweaveError as exc:
        print(json.dumps({"type": type(exc).__name__, **exc.to_dict()}))
    """
)


def _child(path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_second_process_gets_a_clear_lock_error_until_close(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    store = _open(path)
    store.ensure_collection("shared", DIMS, "cosine")
    store.upsert([_rec(1), _rec(2)])
    try:
        error = _child(path)
        assert error["type"] == "VectorStoreError"
        assert error["code"] == "vector_store_error"
        assert "locked by another process" in error["message"]
        assert str(path / "LOCK") in error["message"]
        assert "Milvus server" in error["hint"]
    finally:
        store.close()
    # close() released the Lite server and its lock: the other process now gets in.
    assert _child(path) == {"count": 2}


def test_reopened_collection_is_loaded_and_complete(tmp_path: Path) -> None:
    path = tmp_path / "reopen.db"
    store = _open(path)
    store.ensure_collection("again", DIMS, "euclidean")
    store.upsert([_rec(i, user_id="u") for i in range(30)])
    store.close()

    from pymilvus import MilvusClient

    raw = MilvusClient(str(path))
    try:  # a restarted Milvus Lite reports the collection as not loaded
        assert raw.get_load_state("again")["state"].name == "NotLoad"
    finally:
        raw.close()
    reopened = _open(path)
    try:
        reopened.ensure_collection("again", DIMS, "euclidean")
        assert reopened.count(filter=parse_filter({"user_id": "u"})) == 30
        [hit] = reopened.search(_vec(4), top_k=1)
        assert hit.score == pytest.approx(0.0, abs=1e-3)
        assert hit.payload["i"] in {i for i in range(30) if _vec(i) == _vec(4)}
    finally:
        reopened.close()


def test_ten_thousand_records_upsert_in_chunks(milvus_store: VectorStore) -> None:
    batch = [_rec(i, user_id=f"user-{i % 100}") for i in range(10_000)]
    milvus_store.upsert(batch)
    assert milvus_store.count() == 10_000
    one_user = parse_filter({"user_id": "user-42"})
    assert milvus_store.count(filter=one_user) == 100
    hits = milvus_store.search(_vec(42), top_k=10, filter=one_user)
    assert len(hits) == 10 and {h.payload["user_id"] for h in hits} == {"user-42"}
    seen: list[str] = []
    cursor = None
    while True:
        page = milvus_store.list(limit=1_000, cursor=cursor)
        seen.extend(r.id for r in page.records)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 10_000
    assert seen == sorted(seen)


def test_duplicate_ids_in_one_upsert_keep_the_last(milvus_store: VectorStore) -> None:
    milvus_store.upsert([_rec(1, v="first"), _rec(2), _rec(1, v="last")])
    assert milvus_store.count() == 2
    assert milvus_store.get([_rec(1).id])[0].payload == {"i": 1, "v": "last"}


def test_long_memory_text_round_trips_and_is_searchable(milvus_store: VectorStore) -> None:
    text = "needle " + "語" * 40_000 + " tail"  # ~120 KB of UTF-8, over the VARCHAR limit
    assert len(text.encode("utf-8")) > TEXT_MAX_BYTES
    rec = _rec(5, memory=text, user_id="u")
    milvus_store.upsert([rec])
    assert milvus_store.get([rec.id])[0].payload == rec.payload
    hits = milvus_store.keyword_search("needle", top_k=3)
    assert [h.id for h in hits] == [rec.id]


def test_search_beyond_the_milvus_topk_limit_scans_exactly(milvus_store: VectorStore) -> None:
    milvus_store.upsert([_rec(i, user_id="u" if i % 2 else "v") for i in range(40)])
    native = milvus_store.search(_vec(0), top_k=40)
    scanned = milvus_store.search(_vec(0), top_k=20_000)  # above Milvus' max topk of 16384
    assert [h.id for h in scanned] == [h.id for h in native]
    for a, b in zip(native, scanned, strict=True):
        assert a.score == pytest.approx(b.score, abs=1e-4)
    only_u = milvus_store.search(_vec(0), top_k=20_000, filter=parse_filter({"user_id": "u"}))
    assert [h.id for h in only_u] == [h.id for h in native if h.payload["user_id"] == "u"]


def test_keyword_search_disabled_by_config(tmp_path: Path) -> None:
    store = _open(tmp_path / "nokw.db", keyword_search=False)
    try:
        store.ensure_collection("plain", DIMS, "cosine")
        assert not store.capabilities.keyword_search
        assert store.capabilities.persistent
        store.upsert([_rec(1, memory="hello world")])
        with pytest.raises(VectorStoreError, match="keyword search is not available"):
            store.keyword_search("hello")
    finally:
        store.close()


def test_foreign_collection_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "foreign.db"
    from pymilvus import MilvusClient

    raw = MilvusClient(str(path))
    try:
        raw.create_collection("theirs", dimension=DIMS)
    finally:
        raw.close()
    store = _open(path)
    try:
        with pytest.raises(VectorStoreError, match="not created by memoweave"):
            store.ensure_collection("theirs", DIMS, "cosine")
    finally:
        store.close()


def test_milvus_limits_are_validation_errors(milvus_store: VectorStore) -> None:
    """The kit checks the contract's bad inputs; these are Milvus's own limits."""
    milvus_store.upsert([_rec(1)])
    with pytest.raises(ValidationError, match="128 bytes"):
        milvus_store.upsert([VectorRecord("x" * 129, _vec(2), {})])
    with pytest.raises(ValidationError, match="128 bytes"):
        milvus_store.get(["é" * 65])
    with pytest.raises(ValidationError):
        milvus_store.ensure_collection("bad-name", DIMS, "cosine")
    with pytest.raises(ValidationError, match="dims"):
        milvus_store.ensure_collection("own", 40_000, "cosine")
    assert milvus_store.count() == 1  # failed calls wrote nothing


def test_closed_store_raises(tmp_path: Path) -> None:
    store = _open(tmp_path / "closed.db")
    store.ensure_collection("c", DIMS, "cosine")
    store.close()
    with pytest.raises(VectorStoreError, match="closed"):
        store.count()


@pytest.mark.parametrize(
    "config",
    [
        {"uri": "/tmp/not-a-db-path"},
        {"uri": "x.db", "token": "root:Milvus"},
        {"uri": "x.db", "index_type": "DISKANN"},
        {"uri": "x.db", "unknown": 1},
        {"uri": "x.db", "timeout": 0},
    ],
)
def test_invalid_config_is_a_config_error(config: dict) -> None:
    with pytest.raises(ConfigError):
        load_registry().validate_config("vector_store", "milvus", config)


def test_default_uri_lives_in_memoweave_home(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MEMOWEAVE_HOME", str(tmp_path / "home"))
    config = load_registry().validate_config("vector_store", "milvus", {})
    assert config.uri == str(tmp_path / "home" / "milvus.db")
    assert config.is_lite and config.effective_index_type == "FLAT"
    server = load_registry().validate_config(
        "vector_store", "milvus", {"uri": "http://localhost:19530", "token": "root:Milvus"}
    )
    assert not server.is_lite and server.effective_index_type == "HNSW"
    assert server.effective_index_params == {"M": 16, "efConstruction": 200}
    assert "root:Milvus" not in repr(server)


def test_unreachable_server_maps_to_vector_store_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again when the block ends: nobody listens
    with pytest.raises(VectorStoreError) as info:
        load_registry().create(
            "vector_store", "milvus", {"uri": f"http://127.0.0.1:{port}", "timeout": 1}
        )
    assert "Milvus connect failed" in info.value.message


def test_registration_imports_no_vendor_sdk() -> None:
    code = (
        "import sys, warnings; warnings.simplefilter('ignore');"
        "from memoweave.plugins import load_registry;"
        "info = load_registry().info('vector_store', 'milvus');"
        "vendor = any(m.startswith(('pymilvus', 'milvus_lite')) for m in sys.modules);"
        "print(info.distribution, vendor)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["memoweave-milvus", "False"], done.stderr
