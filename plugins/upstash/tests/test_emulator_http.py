"""The emulator's REST protocol, spoken with raw HTTP (urllib) and with the real SDK."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from typing import Any

import pytest
from memoweave_upstash.client import close
from memoweave_upstash.emulator import UpstashEmulator
from memoweave_upstash.emulator.store import NO_EMBEDDING_MODEL
from upstash_vector import Index
from upstash_vector.errors import UpstashError


def call(
    emu: UpstashEmulator, path: str, body: Any = None, *, token: str | None = "ok"
) -> tuple[int, Any]:
    """POST ``body`` as JSON to ``path``; ``(HTTP status, decoded JSON)``."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(emu.url + path, data=data, method="POST")
    if token is not None:
        request.add_header("Authorization", f"Bearer {emu.token if token == 'ok' else token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def vec(*xs: float) -> list[float]:
    return [*xs, *[0.0] * (8 - len(xs))]


@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_requests_without_a_valid_token_get_401(upstash_emu: UpstashEmulator, token: Any) -> None:
    status, body = call(upstash_emu, "/info", token=token)
    assert status == 401
    assert body == {"error": "Unauthorized: Invalid auth token", "status": 401}
    assert upstash_emu.requests == []


def test_envelope_and_unknown_paths(upstash_emu: UpstashEmulator) -> None:
    status, body = call(upstash_emu, "/info")
    assert status == 200 and body["result"]["dimension"] == 8
    assert body["result"]["similarityFunction"] == "COSINE"
    status, body = call(upstash_emu, "/no-such-endpoint")
    assert status == 404 and body["status"] == 404 and "Not Found" in body["error"]
    request = urllib.request.Request(upstash_emu.url + "/upsert", data=b"{nope", method="POST")
    request.add_header("Authorization", f"Bearer {upstash_emu.token}")
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=10)
    assert info.value.code == 400
    assert "Invalid JSON" in json.loads(info.value.read())["error"]


def test_upsert_single_and_batch_with_and_without_namespace(upstash_emu: UpstashEmulator) -> None:
    assert call(upstash_emu, "/upsert", {"id": "a", "vector": vec(1)}) == (
        200,
        {"result": "Success"},
    )
    batch = [
        {"id": "b", "vector": vec(0, 1), "metadata": {"k": "v"}},
        {"id": "c", "vector": vec(1, 1)},
    ]
    assert call(upstash_emu, "/upsert/ns1", batch)[0] == 200
    info = call(upstash_emu, "/info")[1]["result"]
    assert info["namespaces"] == {
        "": {"vectorCount": 1, "pendingVectorCount": 0},
        "ns1": {"vectorCount": 2, "pendingVectorCount": 0},
    }
    assert info["vectorCount"] == 3
    assert call(upstash_emu, "/list-namespaces")[1]["result"] == ["", "ns1"]


def test_validation_errors_match_the_service(upstash_emu: UpstashEmulator) -> None:
    status, body = call(upstash_emu, "/upsert", {"id": "a", "vector": [1.0, 2.0]})
    assert (status, body["error"]) == (422, "Invalid vector dimension: 2, expected: 8")
    status, body = call(upstash_emu, "/query", {"vector": [1.0], "topK": 1})
    assert status == 422 and "expected: 8" in body["error"]
    status, body = call(upstash_emu, "/query", {"vector": vec(1), "filter": "a = "})
    assert status == 400 and body["error"].startswith("Invalid filter:")
    status, body = call(
        upstash_emu, "/upsert", [{"id": str(i), "vector": vec(1)} for i in range(1001)]
    )
    assert status == 400 and "exceeds the maximum of 1000" in body["error"]
    status, body = call(upstash_emu, "/range", {"cursor": "", "limit": 0})
    assert status == 400


@pytest.mark.parametrize("path", ["/upsert-data", "/query-data", "/resumable-query-data/ns"])
def test_data_endpoints_need_an_embedding_model(upstash_emu: UpstashEmulator, path: str) -> None:
    status, body = call(upstash_emu, path, {"id": "a", "data": "hello"})
    assert (status, body["error"]) == (400, NO_EMBEDDING_MODEL)


def test_query_single_and_batched_array_form(upstash_emu: UpstashEmulator) -> None:
    call(upstash_emu, "/upsert", [{"id": "x", "vector": vec(1)}, {"id": "y", "vector": vec(0, 1)}])
    single = call(upstash_emu, "/query", {"vector": vec(1), "topK": 2})[1]["result"]
    assert [r["id"] for r in single] == ["x", "y"]
    assert single[0]["score"] == pytest.approx(1.0) and single[1]["score"] == pytest.approx(0.5)
    many = call(
        upstash_emu, "/query", [{"vector": vec(1), "topK": 1}, {"vector": vec(0, 1), "topK": 1}]
    )
    assert [[r["id"] for r in page] for page in many[1]["result"]] == [["x"], ["y"]]
    one = call(upstash_emu, "/query", [{"vector": vec(0, 1), "topK": 1}])[1]["result"]
    assert [r["id"] for r in one] == ["y"]  # a one-element batch answers like a single query


def test_fetch_range_update_delete_reset(upstash_emu: UpstashEmulator) -> None:
    vectors = [{"id": f"id{i:02d}", "vector": vec(1, i), "metadata": {"i": i}} for i in range(25)]
    call(upstash_emu, "/upsert/ns", vectors)
    fetched = call(upstash_emu, "/fetch/ns", {"ids": ["id03", "zz"], "includeMetadata": True})
    assert fetched[1]["result"] == [{"id": "id03", "metadata": {"i": 3}}, None]
    seen, cursor = [], ""
    while True:
        page = call(upstash_emu, "/range/ns", {"cursor": cursor, "limit": 10})[1]["result"]
        seen += [v["id"] for v in page["vectors"]]
        cursor = page["nextCursor"]
        if not cursor:
            break
    assert seen == sorted(v["id"] for v in vectors)
    body = {"id": "id01", "metadata": {"j": 1}, "metadataUpdateMode": "PATCH"}
    assert call(upstash_emu, "/update/ns", body)[1]["result"] == {"updated": 1}
    meta = call(upstash_emu, "/fetch/ns", {"ids": ["id01"], "includeMetadata": True})[1]
    assert meta["result"][0]["metadata"] == {"i": 1, "j": 1}
    assert call(upstash_emu, "/update/ns", {"id": "nope", "vector": vec(1)})[1]["result"] == {
        "updated": 0
    }
    assert call(upstash_emu, "/delete/ns", {"ids": ["id01", "nope"]})[1]["result"] == {"deleted": 1}
    assert call(upstash_emu, "/reset/ns")[1]["result"] == "Success"
    assert call(upstash_emu, "/info")[1]["result"]["namespaces"]["ns"]["vectorCount"] == 0
    call(upstash_emu, "/upsert/other", {"id": "a", "vector": vec(1)})
    call(upstash_emu, "/reset?all")
    assert call(upstash_emu, "/info")[1]["result"]["vectorCount"] == 0
    assert call(upstash_emu, "/delete-namespace")[0] == 400
    assert call(upstash_emu, "/delete-namespace/ghost")[0] == 404


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("cosine", lambda a, b: (1 + _dot(a, b) / (_norm(a) * _norm(b))) / 2),
        ("dot", lambda a, b: (1 + _dot(a, b)) / 2),
        ("euclidean", lambda a, b: 1 / (1 + sum((x - y) ** 2 for x, y in zip(a, b, strict=True)))),
    ],
)
def test_scores_are_normalised_like_the_service(metric: str, expected: Any) -> None:
    stored, query = [0.6, 0.8, 0.0], [0.0, 1.0, 0.0]
    with UpstashEmulator(dims=3, metric=metric) as emu:
        index = Index(url=emu.url, token=emu.token, allow_telemetry=False)
        index.upsert([("v", stored)])
        (hit,) = index.query(vector=query, top_k=1)
        assert hit.score == pytest.approx(expected(stored, query))
        info = index.info()
        close(index)
        assert info.similarity_function == {"cosine": "COSINE", "dot": "DOT_PRODUCT"}.get(
            metric, "EUCLIDEAN"
        )


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _norm(a: list[float]) -> float:
    return math.sqrt(_dot(a, a))


def test_sdk_round_trip_with_filters_and_resumable_query(upstash_emu: UpstashEmulator) -> None:
    index = Index(url=upstash_emu.url, token=upstash_emu.token, allow_telemetry=False)
    index.upsert(
        [
            (f"r{i}", vec(1, i / 10), {"n": i, "tag": "even" if i % 2 == 0 else "odd"})
            for i in range(30)
        ],
        namespace="ns",
    )
    hits = index.query(vector=vec(1), top_k=5, filter="tag = 'odd' AND n >= 11", namespace="ns",
                       include_metadata=True)  # fmt: skip
    assert [h.id for h in hits] == ["r11", "r13", "r15", "r17", "r19"]
    batched = index.query_many(
        queries=[
            {"vector": vec(1), "top_k": 2},
            {"vector": vec(1), "top_k": 1, "filter": "n = 29"},
        ],
        namespace="ns",
    )
    assert [[h.id for h in page] for page in batched] == [["r0", "r1"], ["r29"]]
    first, handle = index.resumable_query(
        vector=vec(1), top_k=10, namespace="ns", filter="tag = 'even'"
    )
    rest = handle.fetch_next(100)
    handle.stop()
    assert [h.id for h in first + rest] == [f"r{i}" for i in range(0, 30, 2)]
    with pytest.raises(UpstashError, match="not found"):
        handle.fetch_next(1)
    assert index.delete(["r0", "r1"], namespace="ns").deleted == 2
    close(index)
    bad = Index(url=upstash_emu.url, token="bad", allow_telemetry=False)
    with pytest.raises(UpstashError, match="Unauthorized"):
        bad.info()
    close(bad)
