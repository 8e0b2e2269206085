"""The ``upstash`` store through the registry and the real SDK, against the emulator."""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from memoweave_upstash.emulator import UpstashEmulator
from memoweave_upstash.store import UpstashVectorStore

from memoweave.errors import ConfigError, NotFound, ValidationError, VectorStoreError
from memoweave.filters import Or, evaluate, parse_filter
from memoweave.plugins import load_registry
from memoweave.providers.vector_store import VectorRecord
from memoweave.testing import free_port

TRICKY = ["it's", 'say "hi"', "back\\slash", "both ' and \" \\", "東京 ラーメン", "*?[x]"]


def make_store(emu: UpstashEmulator, **config: Any) -> UpstashVectorStore:
    cfg = {"url": emu.url, "token": emu.token, **config}
    return load_registry().create("vector_store", "upstash", cfg)  # type: ignore[return-value]


def rand_vector(rng: random.Random, dims: int = 8) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(dims)]


def rec(num: int, rng: random.Random, /, **payload: Any) -> VectorRecord:
    return VectorRecord(f"{num:08d}-0000-4000-8000-000000000000", rand_vector(rng), payload)


@pytest.fixture
def upstash_store(upstash_emu: UpstashEmulator) -> Iterator[UpstashVectorStore]:
    store = make_store(upstash_emu, namespace_prefix="app-")
    store.ensure_collection("memories", 8, "cosine")
    yield store
    store.close()


def test_tricky_strings_filter_exactly(upstash_store: UpstashVectorStore) -> None:
    rng = random.Random(1)
    records = [rec(i, rng, user_id=v, tags=[v, "x"]) for i, v in enumerate(TRICKY)]
    upstash_store.upsert(records)
    for r in records:
        value = r.payload["user_id"]
        for spec in (
            {"user_id": value},
            {"tags": {"contains": value}},
            {"user_id": {"in": [value]}},
        ):
            hits = upstash_store.search(r.vector, top_k=10, filter=parse_filter(spec))
            assert [h.id for h in hits] == [r.id], spec
        assert upstash_store.count(filter=parse_filter({"user_id": value})) == 1
        page = upstash_store.list(filter=parse_filter({"user_id": {"ne": value}}), limit=100)
        assert len(page.records) == len(TRICKY) - 1
    assert upstash_store.namespace == "app-memories"


def test_none_values_round_trip_and_count_as_missing(upstash_store: UpstashVectorStore) -> None:
    rng = random.Random(2)
    upstash_store.upsert([rec(1, rng, a=None, b=1), rec(2, rng, b=None), rec(3, rng, a="x")])
    got = upstash_store.get([rec(1, rng).id])
    assert got[0].payload == {"a": None, "b": 1}
    exists = upstash_store.list(filter=parse_filter({"a": "*"})).records
    assert [r.payload for r in exists] == [{"a": "x"}]
    assert upstash_store.count(filter=parse_filter({"NOT": {"a": "*"}})) == 2


def test_ten_thousand_records_are_upserted_in_service_sized_chunks(
    upstash_emu: UpstashEmulator, upstash_store: UpstashVectorStore
) -> None:
    rng = random.Random(3)
    records = [rec(i, rng, user_id=f"u{i % 7}", i=i) for i in range(10_000)]
    upstash_store.upsert(records)
    assert upstash_emu.requests.count("upsert") == 10  # 1000 vectors per request
    assert upstash_store.count() == 10_000
    seen, cursor, pages = [], None, 0
    while True:
        page = upstash_store.list(limit=3000, cursor=cursor)
        seen += [r.id for r in page.records]
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 4 and sorted(seen) == sorted(r.id for r in records)
    assert upstash_store.count(filter=parse_filter({"user_id": "u3"})) == sum(
        1 for r in records if r.payload["user_id"] == "u3"
    )


def test_filtered_range_paging_over_several_pages(upstash_emu: UpstashEmulator) -> None:
    store = make_store(upstash_emu, read_batch_size=7)
    store.ensure_collection("paging", 8)
    rng = random.Random(4)
    records = [rec(i, rng, n=i) for i in range(60)]
    store.upsert(records)
    node = parse_filter({"n": {"gte": 10}, "NOT": {"n": {"in": [20, 21, 22]}}})
    seen, cursor = [], None
    while True:
        page = store.list(filter=node, limit=5, cursor=cursor)
        assert len(page.records) <= 5
        seen += [r.id for r in page.records]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [r.id for r in records if evaluate(node, r.payload)]
    assert upstash_emu.requests.count("range") > 60 // 7
    with pytest.raises(ValidationError, match="invalid cursor"):
        store.list(cursor="not-a-cursor")
    store.close()


def test_batched_queries_use_query_many(upstash_emu: UpstashEmulator) -> None:
    store = make_store(upstash_emu, query_batch_size=64)
    store.ensure_collection("batch", 8)
    rng = random.Random(5)
    store.upsert([rec(i, rng, g=i % 3) for i in range(200)])
    queries = [rand_vector(rng) for _ in range(150)]
    node = parse_filter({"g": {"ne": 1}})
    before = upstash_emu.requests.count("query")
    batched = store.search_many(queries, top_k=4, filter=node)
    assert upstash_emu.requests.count("query") - before == 3  # 64 + 64 + 22
    singles = [store.search(q, top_k=4, filter=node) for q in queries]
    assert upstash_emu.requests.count("query") - before == 153
    assert [[h.id for h in hits] for hits in batched] == [[h.id for h in s] for s in singles]
    assert all(h.payload["g"] != 1 for hits in batched for h in hits)
    assert store.search_many([queries[0]], top_k=2) == [store.search(queries[0], top_k=2)]
    assert store.search_many([], top_k=2) == []
    store.close()


@pytest.mark.parametrize(
    "spec", [{"t": {"icontains": "KEEP"}}, {"NOT": {"n": {"lt": 190}}}, {"t": {"icontains": "ǅ"}}]
)
def test_inexact_filters_fill_top_k_through_resumable_queries(
    upstash_emu: UpstashEmulator, spec: dict[str, Any]
) -> None:
    store = make_store(upstash_emu)
    store.ensure_collection("inexact", 8)
    rng = random.Random(6)
    query = rand_vector(rng)
    records = [rec(i, rng, n=i, t="keep ǆ" if i >= 190 else "drop") for i in range(200)]
    store.upsert(records)
    node = parse_filter(spec)
    hits = store.search(query, top_k=5, filter=node)
    expected = sorted(
        (r for r in records if evaluate(node, r.payload)),
        key=lambda r: -_cosine(query, r.vector),
    )[:5]
    assert [h.id for h in hits] == [r.id for r in expected]
    assert "resumable-query" in upstash_emu.requests
    assert upstash_emu.requests.count("resumable-query-end") == upstash_emu.requests.count(
        "resumable-query"
    )
    store.close()


def test_top_k_above_the_service_limit_pages(upstash_emu: UpstashEmulator) -> None:
    store = make_store(upstash_emu, max_top_k=10)
    store.ensure_collection("big", 8)
    rng = random.Random(7)
    store.upsert([rec(i, rng) for i in range(40)])
    hits = store.search(rand_vector(rng), top_k=25)
    assert len(hits) == 25 and [h.score for h in hits] == sorted(
        (h.score for h in hits), reverse=True
    )
    store.close()


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


@pytest.mark.parametrize(
    ("metric", "exact"),
    [
        ("cosine", _cosine),
        ("dot", lambda a, b: sum(x * y for x, y in zip(a, b, strict=True))),
        ("euclidean", lambda a, b: -math.dist(a, b)),
    ],
)
def test_scores_convert_back_to_the_contract(metric: str, exact: Any) -> None:
    rng = random.Random(8)
    with UpstashEmulator(dims=8, metric=metric) as emu:
        store = make_store(emu)
        store.ensure_collection("scores", 8, metric)  # type: ignore[arg-type]
        records = [
            VectorRecord(f"r{i}", [x * (1 + i % 3) for x in rand_vector(rng)]) for i in range(12)
        ]
        store.upsert(records)
        query = rand_vector(rng)
        hits = store.search(query, top_k=12)
        vectors = {r.id: r.vector for r in records}
        assert [h.score for h in hits] == pytest.approx([exact(vectors[h.id], query) for h in hits])
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        with pytest.raises(VectorStoreError, match="has dimension 8"):
            store.ensure_collection("scores", 8, "cosine" if metric != "cosine" else "dot")
        with pytest.raises(VectorStoreError):
            store.ensure_collection("scores", 9, metric)  # type: ignore[arg-type]
        store.close()


def test_update_and_not_found(upstash_store: UpstashVectorStore) -> None:
    rng = random.Random(9)
    r = rec(1, rng, a=1)
    upstash_store.upsert([r])
    upstash_store.update(r.id, payload={"b": "东京"})
    (got,) = upstash_store.get([r.id], with_vectors=True)
    assert got.payload == {"b": "东京"} and got.vector == pytest.approx(r.vector)
    missing = rec(2, rng).id
    for kwargs in ({"payload": {"a": 1}}, {"vector": r.vector}, {}):
        with pytest.raises(NotFound):
            upstash_store.update(missing, **kwargs)
    with pytest.raises(ValidationError, match="dimensions"):
        upstash_store.update(r.id, vector=[1.0, 2.0])
    with pytest.raises(ValidationError, match="payload key"):
        upstash_store.upsert([VectorRecord(r.id, r.vector, {"bad-key": 1})])


def test_drop_collection_resets_only_its_namespace(upstash_emu: UpstashEmulator) -> None:
    rng = random.Random(10)
    one, two = make_store(upstash_emu), make_store(upstash_emu)
    one.ensure_collection("one", 8)
    two.ensure_collection("two", 8)
    one.upsert([rec(1, rng)])
    two.upsert([rec(2, rng)])
    one.drop_collection()
    assert (one.count(), two.count()) == (0, 1)
    one.close()
    two.close()


def test_wrong_token_is_a_vector_store_error(upstash_emu: UpstashEmulator) -> None:
    store = load_registry().create(
        "vector_store", "upstash", {"url": upstash_emu.url, "token": "wrong"}
    )
    with pytest.raises(VectorStoreError, match="Unauthorized: Invalid auth token") as info:
        store.ensure_collection("x", 8)
    assert "token" in info.value.hint
    store.close()


def test_unreachable_server_is_a_vector_store_error() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    store = load_registry().create(
        "vector_store", "upstash", {"url": url, "token": "t", "retries": 0, "connect_timeout": 2}
    )
    with pytest.raises(VectorStoreError, match="could not reach"):
        store.ensure_collection("x", 8)
    store.close()
    store.close()


class _BadGateway(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = b"<html>502 Bad Gateway</html>"
        self.send_response(502)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_non_json_error_keeps_status_and_body() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _BadGateway)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        store = load_registry().create(
            "vector_store", "upstash", {"url": url, "token": "t", "retries": 0}
        )
        with pytest.raises(VectorStoreError, match="HTTP 502: <html>502 Bad Gateway") as info:
            store.ensure_collection("x", 8)
        assert info.value.details["status"] == 502
        store.close()
    finally:
        server.shutdown()
        server.server_close()


def test_config_from_environment_at_factory_time(
    upstash_emu: UpstashEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UPSTASH_VECTOR_REST_URL", raising=False)
    monkeypatch.delenv("UPSTASH_VECTOR_REST_TOKEN", raising=False)
    registry = load_registry()
    with pytest.raises(ConfigError, match="no REST URL"):
        registry.create("vector_store", "upstash", {})
    monkeypatch.setenv("UPSTASH_VECTOR_REST_URL", upstash_emu.url)
    with pytest.raises(ConfigError, match="no REST token"):
        registry.create("vector_store", "upstash", {})
    monkeypatch.setenv("UPSTASH_VECTOR_REST_TOKEN", upstash_emu.token)
    store = registry.create("vector_store", "upstash", {})
    store.ensure_collection("env", 8)
    assert store.count() == 0
    store.close()
    with pytest.raises(ConfigError):
        registry.create("vector_store", "upstash", {"namespace_prefix": "a/b"})
    with pytest.raises(ConfigError):
        registry.create("vector_store", "upstash", {"upsert_batch_size": 5000})


def test_a_filter_matching_nothing_finds_nothing(upstash_store: UpstashVectorStore) -> None:
    upstash_store.upsert([rec(1, random.Random(11), a=1)])
    never = Or(())  # matches nothing: answered without a request
    assert upstash_store.search([0.1] * 8, filter=never) == []
    assert upstash_store.count(filter=never) == 0
    assert upstash_store.list(filter=never).records == []
