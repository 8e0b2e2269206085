"""Qdrant-specific behaviour beyond the kit: modes, locks, persistence, odd values, scale."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from memoweave_qdrant.config import QdrantStoreConfig

from memoweave.errors import ConfigError, ValidationError, VectorStoreError
from memoweave.filters import parse_filter
from memoweave.plugins import load_registry
from memoweave.providers.vector_store import TEXT_FIELD, VectorRecord
from memoweave.testing import closed_port_url


def _id(n: int) -> str:
    return str(uuid.UUID(int=n + 1))


def _vec(n: int, dims: int = 4) -> list[float]:
    return [float((n * 7 + k) % 11) - 5.0 + 0.1 * k for k in range(dims)]


@pytest.mark.parametrize(
    "config",
    [
        {"mode": "edge", "url": "http://localhost:6333"},
        {"mode": "local"},
        {"mode": "local", "path": "/tmp/x", "location": ":memory:"},
        {"mode": "server"},
        {"url": "localhost:6333"},
        {"path": "/tmp/x", "api_key": "k"},
        {"location": "/tmp/x"},
        {"mode": "edge", "colour": "blue"},
    ],
)
def test_config_rejects_mixed_or_incomplete_modes(config: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        load_registry().create("vector_store", "qdrant", config)


def test_config_infers_the_mode_and_defaults_edge_under_memoweave_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMOWEAVE_HOME", str(tmp_path / "home"))
    assert QdrantStoreConfig().resolved_mode == "edge"
    assert QdrantStoreConfig().edge_root() == tmp_path / "home" / "qdrant-edge"
    assert QdrantStoreConfig(location=":memory:").resolved_mode == "local"
    assert QdrantStoreConfig(url="https://q.example:6333", api_key="k").resolved_mode == "server"


def test_unreachable_server_is_a_vector_store_error(qdrant_make_store: Any) -> None:
    store = qdrant_make_store({"url": closed_port_url(), "timeout": 2})
    with pytest.raises(VectorStoreError) as info:
        store.ensure_collection("c", 4)
    assert info.value.details["engine_message"]


def test_reopen_sees_data_and_original_vectors(
    qdrant_make_store: Any, qdrant_config: dict[str, Any]
) -> None:
    first = qdrant_make_store(qdrant_config)
    first.ensure_collection("persist", 4, "cosine")
    first.upsert([VectorRecord(_id(i), _vec(i), {"user_id": "u", "i": i}) for i in range(20)])
    first.update(_id(3), payload={"user_id": "v"})
    first.close()
    again = qdrant_make_store(qdrant_config)
    again.ensure_collection("persist", 4, "cosine")
    assert again.count() == 20
    assert again.count(filter=parse_filter({"user_id": "v"})) == 1
    (rec,) = again.get([_id(5)], with_vectors=True)
    # Qdrant Edge keeps a new collection's vectors as float16 (11 significant bits)
    rel = 2.0**-11 if qdrant_config["mode"] == "edge" else 1e-5
    assert rec.vector == pytest.approx(_vec(5), rel=rel)
    with pytest.raises(VectorStoreError, match="dims=4"):
        again.ensure_collection("persist", 8, "cosine")


def test_second_store_on_a_locked_folder_names_the_lock_and_the_way_out(
    qdrant_make_store: Any, qdrant_config: dict[str, Any]
) -> None:
    holder = qdrant_make_store(qdrant_config)
    holder.ensure_collection("locked", 4)
    with pytest.raises(VectorStoreError) as info:
        other = qdrant_make_store(qdrant_config)
        other.ensure_collection("locked", 4)
    message = str(info.value)
    assert "locked" in message
    assert "Qdrant server" in message
    holder.close()
    reopened = qdrant_make_store(qdrant_config)
    reopened.ensure_collection("locked", 4)  # released on close
    assert reopened.count() == 0


ODD_VALUES = [
    "北京烤鸭",
    "emoji 🧠 memory",
    'say "hi"',
    "back\\slash",
    "it's",
    "tab\tnew\nline",
    "",
]


def test_unicode_and_escaping_values_round_trip_and_filter(
    qdrant_make_store: Any, qdrant_config: dict[str, Any]
) -> None:
    store = qdrant_make_store({**qdrant_config, "text_index": True})
    store.ensure_collection("odd", 4)
    store.upsert(
        [
            VectorRecord(
                _id(i), _vec(i), {"user_id": value, "memory": f"{value} 记忆", "tags": [value]}
            )
            for i, value in enumerate(ODD_VALUES)
        ]
    )
    for i, value in enumerate(ODD_VALUES):
        node = parse_filter({"user_id": value})
        assert [r.id for r in store.list(filter=node).records] == [_id(i)]
        assert store.count(filter=parse_filter({"tags": {"contains": value}})) == 1
        assert store.get([_id(i)])[0].payload["user_id"] == value
    hits = store.search(_vec(0), top_k=10, filter=parse_filter({"user_id": {"icontains": "EMOJI"}}))
    assert [h.id for h in hits] == [_id(1)]
    keyword = store.keyword_search("北京烤鸭", top_k=3)
    assert keyword and keyword[0].id == _id(0)


def test_reserved_payload_prefix_and_bad_ids_are_rejected(
    qdrant_make_store: Any, tmp_path: Path
) -> None:
    store = qdrant_make_store({"partitions": 1, "path": str(tmp_path / "edge")})
    store.ensure_collection("bad", 4)
    with pytest.raises(ValidationError, match="reserved"):
        store.upsert([VectorRecord(_id(0), _vec(0), {"_mw_lists": ["x"]})])
    with pytest.raises(ValidationError, match="UUID"):
        store.upsert([VectorRecord("not-a-uuid", _vec(0), {})])
    with pytest.raises(ValidationError, match="UUID"):
        store.get([str(uuid.UUID(int=0xABCDEF)).upper()])
    with pytest.raises(ValidationError, match="cursor"):
        store.list(cursor="garbage")
    assert store.count() == 0  # nothing half-written


@pytest.mark.parametrize(("metric", "expected"), [("dot", 2.0), ("euclidean", -1.0)])
def test_scores_follow_the_metric(
    qdrant_make_store: Any, qdrant_config: dict[str, Any], metric: str, expected: float
) -> None:
    store = qdrant_make_store(qdrant_config)
    store.ensure_collection(f"m_{metric}", 2, metric)  # type: ignore[arg-type]
    store.upsert([VectorRecord(_id(0), [2.0, 0.0], {})])
    (hit,) = store.search([1.0, 0.0], top_k=1)
    assert hit.score == pytest.approx(expected, abs=1e-5)


def test_ten_thousand_records_in_one_batch(
    qdrant_make_store: Any, qdrant_config: dict[str, Any]
) -> None:
    if qdrant_config["mode"] == "local":
        pytest.skip("qdrant-client local mode writes ~100 records/s on disk; see bench/README.md")
    store = qdrant_make_store(qdrant_config)
    store.ensure_collection("big", 4)
    n = 10_000
    store.upsert([VectorRecord(_id(i), _vec(i), {"user_id": f"u{i % 100}"}) for i in range(n)])
    assert store.count() == n
    assert store.count(filter=parse_filter({"user_id": "u7"})) == n // 100
    seen: list[str] = []
    cursor = None
    while True:
        page = store.list(limit=999, cursor=cursor)
        seen.extend(r.id for r in page.records)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert len(seen) == n and len(set(seen)) == n
    hits = store.search(_vec(7), top_k=5, filter=parse_filter({"user_id": "u7"}))
    assert len(hits) == 5 and all(h.payload["user_id"] == "u7" for h in hits)


def test_edge_indexes_the_keys_every_read_filters_on(tmp_path: Path) -> None:
    """Without payload indexes on status and expires_ts, Qdrant reads each candidate's
    payload to check them: a full Memory read filter then costs ~5x the scope filter."""
    from memoweave.providers.vector_store import EXPIRY_KEY, SCOPE_KEYS, STATUS_KEY

    store = load_registry().create(
        "vector_store", "qdrant", {"mode": "edge", "partitions": 1, "path": str(tmp_path / "edge")}
    )
    try:
        store.ensure_collection("indexed", 4)
        schema = store._engine.shards.loaded[0]._shard.info().payload_schema
        assert {*SCOPE_KEYS, STATUS_KEY, EXPIRY_KEY} <= set(schema)
    finally:
        store.close()


def test_the_text_index_is_opt_in_and_kept_once_made(
    qdrant_make_store: Any, qdrant_config: dict[str, Any]
) -> None:
    """Without ``text_index`` no text index is built (writes pay nothing for a keyword
    search the core does) and keyword_search is a typed error; a text index made earlier
    is never dropped by a store opened without the option."""
    records = [
        VectorRecord(_id(i), _vec(i), {"user_id": "u", "memory": f"oat {i}"}) for i in range(3)
    ]
    plain = qdrant_make_store(qdrant_config)
    assert not plain.capabilities.keyword_search
    plain.ensure_collection("kw", 4)
    plain.upsert(records)
    with pytest.raises(VectorStoreError, match="text index") as info:
        plain.keyword_search("oat", top_k=3)
    assert info.value.details["reason"] == "no_text_index"
    edge = qdrant_config["mode"] == "edge"  # local mode reports no payload schema
    assert not edge or TEXT_FIELD not in _payload_schema(plain)
    plain.close()
    indexed = qdrant_make_store({**qdrant_config, "text_index": True})
    assert indexed.capabilities.keyword_search
    indexed.ensure_collection("kw", 4)
    assert not edge or TEXT_FIELD in _payload_schema(indexed)  # added to the collection
    assert {h.id for h in indexed.keyword_search("oat", top_k=3)} == {r.id for r in records}
    indexed.close()
    again = qdrant_make_store(qdrant_config)
    again.ensure_collection("kw", 4)
    assert not edge or TEXT_FIELD in _payload_schema(again)
    assert again.count() == 3


def _payload_schema(store: Any) -> set[str]:
    """The payload indexes every partition of an edge store's bound collection has."""
    parts = store._engine.shards.all()
    return set.intersection(*(set(part._shard.info().payload_schema) for part in parts))
