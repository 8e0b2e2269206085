"""The built-in in-memory vector store: contract points, scores, BM25 and persistence.

Every test runs against the numpy backend and the pure-Python fallback (``backend``).
"""

from __future__ import annotations

import json
import math
import random
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memoweave.errors import ConfigError, NotFound, ValidationError, VectorStoreError
from memoweave.filters import evaluate, parse_filter
from memoweave.providers.vector_store import VectorRecord
from memoweave.stores import _collection, _vectors
from memoweave.stores._bm25 import tokenize
from memoweave.stores.memory import InMemoryStoreConfig, InMemoryVectorStore

DIMS = 8


@pytest.fixture(params=["numpy", "python"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setattr(_vectors, "np", None)
    return str(request.param)


@pytest.fixture
def mem_store(backend: str) -> Iterator[InMemoryVectorStore]:
    store = InMemoryVectorStore()
    store.ensure_collection("test", DIMS, "cosine")
    yield store
    store.close()


def vec(seed: Any, dims: int = DIMS) -> list[float]:
    rng = random.Random(f"vec-{seed}")
    return [rng.uniform(-1, 1) for _ in range(dims)]


def rec(i: int, **payload: Any) -> VectorRecord:
    return VectorRecord(id=f"id-{i:05d}", vector=vec(i), payload={"i": i, **payload})


def all_ids(store: InMemoryVectorStore, limit: int = 7, **kwargs: Any) -> list[str]:
    out, cursor = [], None
    while True:
        page = store.list(limit=limit, cursor=cursor, **kwargs)
        out.extend(r.id for r in page.records)
        if page.next_cursor is None:
            return out
        cursor = page.next_cursor


# -- binding and validation ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "dims", "metric"),
    [("", 8, "cosine"), ("a/b", 8, "cosine"), (".x", 8, "cosine"), (5, 8, "cosine"),
     ("ok", 0, "cosine"), ("ok", True, "cosine"), ("ok", 8.0, "cosine"), ("ok", 8, "l2")],
)  # fmt: skip
def test_ensure_collection_validates_arguments(name: Any, dims: Any, metric: Any) -> None:
    with pytest.raises(ValidationError):
        InMemoryVectorStore().ensure_collection(name, dims, metric)


def test_ensure_collection_rejects_mismatch_and_keeps_data(mem_store: InMemoryVectorStore) -> None:
    mem_store.upsert([rec(1)])
    with pytest.raises(VectorStoreError, match="dims=8"):
        mem_store.ensure_collection("test", 9, "cosine")
    with pytest.raises(VectorStoreError, match="metric"):
        mem_store.ensure_collection("test", DIMS, "dot")
    mem_store.ensure_collection("test", DIMS, "cosine")
    assert mem_store.count() == 1


def test_collections_are_separate(mem_store: InMemoryVectorStore) -> None:
    mem_store.upsert([rec(1)])
    mem_store.ensure_collection("other", 3, "dot")
    assert mem_store.count() == 0
    mem_store.ensure_collection("test", DIMS, "cosine")
    assert mem_store.count() == 1


def test_config_forms() -> None:
    assert InMemoryVectorStore({"path": None}).capabilities.persistent is False
    assert InMemoryVectorStore(InMemoryStoreConfig()).capabilities.keyword_search is True
    with pytest.raises(ConfigError, match="nope"):
        InMemoryVectorStore({"nope": 1})
    with pytest.raises(ValidationError):
        InMemoryVectorStore(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bad",
    [
        VectorRecord("", vec(0)),
        VectorRecord(5, vec(0)),  # type: ignore[arg-type]
        VectorRecord("x", vec(0, 7)),
        VectorRecord("x", [*vec(0, 7), float("nan")]),
        VectorRecord("x", "abcdefgh"),  # type: ignore[arg-type]
        VectorRecord("x", [*vec(0, 7), "a"]),  # type: ignore[list-item]
        VectorRecord("x", vec(0), {"bad-key": 1}),
        VectorRecord("x", vec(0), {"k": float("inf")}),
        VectorRecord("x", vec(0), {"k": {1, 2}}),
        VectorRecord("x", vec(0), {"k": {1: "a"}}),
        VectorRecord("x", vec(0), ["not", "a", "dict"]),  # type: ignore[arg-type]
    ],
)
def test_invalid_records_write_nothing(mem_store: InMemoryVectorStore, bad: VectorRecord) -> None:
    with pytest.raises(ValidationError):
        mem_store.upsert([rec(1), bad])
    assert mem_store.count() == 0


# -- records ------------------------------------------------------------------------------


def test_upsert_get_round_trip_and_replace(mem_store: InMemoryVectorStore) -> None:
    mem_store.upsert([rec(i, user_id="u", nested={"a": [1, {"b": None}]}) for i in range(3)])
    got = mem_store.get(["id-00002", "missing", "id-00000"], with_vectors=True)
    assert [g.id for g in got] == ["id-00002", "id-00000"]
    assert got[0].payload == {"i": 2, "user_id": "u", "nested": {"a": [1, {"b": None}]}}
    assert got[0].vector == pytest.approx(vec(2))
    assert mem_store.get(["id-00001"])[0].vector is None
    mem_store.upsert([VectorRecord("id-00001", vec(99), {"new": True})])
    again = mem_store.get(["id-00001"], with_vectors=True)[0]
    assert again.payload == {"new": True}
    assert again.vector == pytest.approx(vec(99))
    assert mem_store.count() == 3
    assert all_ids(mem_store) == ["id-00000", "id-00001", "id-00002"]  # replace keeps place


def test_no_aliasing_in_or_out(mem_store: InMemoryVectorStore) -> None:
    payload = {"tags": ["a"], "meta": {"k": [1]}}
    vector = vec(1)
    record = VectorRecord("x", vector, payload)
    mem_store.upsert([record])
    assert record.payload == {"tags": ["a"], "meta": {"k": [1]}} and record.vector == vec(1)
    payload["tags"].append("mutated")
    vector[0] = 42.0
    stored = mem_store.get(["x"], with_vectors=True)[0]
    assert stored.payload == {"tags": ["a"], "meta": {"k": [1]}}
    assert stored.vector == pytest.approx(vec(1))
    stored.payload["meta"]["k"].append(2)
    mem_store.search(vec(1), top_k=1)[0].payload["tags"].clear()
    mem_store.list().records[0].payload["extra"] = 1
    assert mem_store.get(["x"])[0].payload == {"tags": ["a"], "meta": {"k": [1]}}


def test_delete_and_update(mem_store: InMemoryVectorStore) -> None:
    mem_store.upsert([rec(i, memory=f"note {i}") for i in range(4)])
    mem_store.delete(["id-00001", "missing"])
    mem_store.delete([])
    assert mem_store.count() == 3 and mem_store.get(["id-00001"]) == []
    assert "id-00001" not in [h.id for h in mem_store.search(vec(1), top_k=10)]
    mem_store.update("id-00002", vector=vec(50))
    assert mem_store.get(["id-00002"])[0].payload == {"i": 2, "memory": "note 2"}
    assert mem_store.search(vec(50), top_k=1)[0].id == "id-00002"
    mem_store.update("id-00002", payload={"memory": "replaced"})
    assert mem_store.get(["id-00002"], with_vectors=True)[0].payload == {"memory": "replaced"}
    assert [h.id for h in mem_store.keyword_search("replaced")] == ["id-00002"]
    mem_store.update("id-00003")  # nothing to change, but the id exists
    with pytest.raises(NotFound):
        mem_store.update("id-00001", payload={"a": 1})
    with pytest.raises(ValidationError):
        mem_store.update("id-00002", vector=vec(1, 3))
    with pytest.raises(ValidationError):
        mem_store.update("id-00002", payload={"a b": 1})
    assert mem_store.count() == 3


def test_drop_collection_keeps_binding(mem_store: InMemoryVectorStore) -> None:
    mem_store.upsert([rec(i) for i in range(5)])
    mem_store.drop_collection()
    assert mem_store.count() == 0 and mem_store.search(vec(1)) == []
    mem_store.upsert([rec(9)])
    assert mem_store.count() == 1
    mem_store.drop_collection()
    mem_store.ensure_collection("test", 3, "dot")  # gone, so other dims are fine now
    assert mem_store.count() == 0


def test_close_is_idempotent_and_final(backend: str) -> None:
    store = InMemoryVectorStore()
    store.ensure_collection("c", DIMS)
    store.close()
    store.close()
    with pytest.raises(VectorStoreError, match="closed"):
        store.count()


# -- search -------------------------------------------------------------------------------


def _reference_scores(matrix: np.ndarray, query: np.ndarray, metric: str) -> np.ndarray:
    if metric == "dot":
        return matrix @ query
    if metric == "euclidean":
        return -np.linalg.norm(matrix - query, axis=1)
    return (matrix @ query) / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query))


@pytest.mark.parametrize("metric", ["cosine", "dot", "euclidean"])
def test_search_scores_match_numpy_reference(backend: str, metric: str) -> None:
    store = InMemoryVectorStore()
    store.ensure_collection("m", 16, metric)  # type: ignore[arg-type]
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(300, 16)) * rng.uniform(0.1, 5.0, size=(300, 1))
    store.upsert(
        [
            VectorRecord(f"r{i}", matrix[i].tolist(), {"i": i, "even": i % 2 == 0})
            for i in range(300)
        ]
    )
    for _ in range(5):
        query = rng.normal(size=16)
        expected = _reference_scores(matrix, query, metric)
        hits = store.search(query.tolist(), top_k=10)
        order = np.argsort(-expected)[:10]
        assert [h.id for h in hits] == [f"r{i}" for i in order]
        assert [h.score for h in hits] == pytest.approx(expected[order].tolist(), abs=1e-9)
        even = store.search(query.tolist(), top_k=5, filter=parse_filter({"even": True}))
        even_order = [i for i in np.argsort(-expected) if i % 2 == 0][:5]
        assert [h.id for h in even] == [f"r{i}" for i in even_order]
        assert len(store.search(query.tolist(), top_k=1000)) == 300


def test_cosine_with_zero_vectors_scores_zero(mem_store: InMemoryVectorStore) -> None:
    mem_store.upsert([VectorRecord("zero", [0.0] * DIMS), rec(1)])
    scores = {h.id: h.score for h in mem_store.search(vec(1), top_k=2)}
    assert scores["zero"] == 0.0 and scores["id-00001"] == pytest.approx(1.0)
    assert all(h.score == 0.0 for h in mem_store.search([0.0] * DIMS, top_k=2))


def test_search_validates_query(mem_store: InMemoryVectorStore) -> None:
    mem_store.upsert([rec(1)])
    for bad_k in (0, -1, 2.5, True):
        with pytest.raises(ValidationError):
            mem_store.search(vec(1), top_k=bad_k)
    with pytest.raises(ValidationError, match="dimensions"):
        mem_store.search(vec(1, 3))
    with pytest.raises(ValidationError):
        mem_store.search([math.inf] * DIMS)


FILTERS = [
    {"user_id": "alice"},
    {"user_id": {"ne": "alice"}},
    {"n": {"gte": 10, "lt": 30}},
    {"tags": {"contains": "x"}},
    {"OR": [{"user_id": "bob"}, {"n": {"in": [1, 2, 3]}}]},
    {"NOT": {"flag": True}},
    {"memory": {"icontains": "東京"}},
    {"flag": "*"},
]


@pytest.mark.parametrize("spec", FILTERS, ids=[json.dumps(f, ensure_ascii=False) for f in FILTERS])
def test_filtered_reads_agree_with_reference_evaluator(
    mem_store: InMemoryVectorStore, spec: dict[str, Any]
) -> None:
    rng = random.Random(3)
    records = []
    for i in range(60):
        payload: dict[str, Any] = {"user_id": rng.choice(["alice", "bob", "李雷"]), "n": i}
        if i % 3:
            payload["tags"] = rng.sample(["x", "y", "z"], 2)
        if i % 4 == 0:
            payload["flag"] = i % 8 == 0
        payload["memory"] = rng.choice(["trip to 東京", "likes tea", "東京 again"])
        records.append(VectorRecord(f"r{i:03d}", vec(i), payload))
    mem_store.upsert(records)
    node = parse_filter(spec)
    expected = [r.id for r in records if evaluate(node, r.payload)]
    assert mem_store.count(filter=node) == len(expected)
    assert all_ids(mem_store, filter=node) == expected
    assert sorted(h.id for h in mem_store.search(vec("q"), top_k=100, filter=node)) == expected
    assert all(evaluate(node, h.payload) for h in mem_store.keyword_search("東京 tea", filter=node))
    assert mem_store.count(filter=spec) == len(expected)  # a dict spec is parsed on the way in


# -- list ---------------------------------------------------------------------------------


def test_list_pages_once_in_insertion_order(mem_store: InMemoryVectorStore) -> None:
    mem_store.upsert([rec(i) for i in range(23)])
    assert all_ids(mem_store, limit=5) == [f"id-{i:05d}" for i in range(23)]
    assert all_ids(mem_store, limit=23) == [f"id-{i:05d}" for i in range(23)]
    assert mem_store.list(limit=23).next_cursor is None
    page = mem_store.list(limit=10)
    mem_store.delete([page.records[-1].id, "id-00010", "id-00011"])  # around the cursor
    rest = mem_store.list(limit=100, cursor=page.next_cursor)
    assert [r.id for r in rest.records] == [f"id-{i:05d}" for i in range(12, 23)]


def test_list_validates_arguments(mem_store: InMemoryVectorStore) -> None:
    for bad in ("garbage", "mem1:-1", "mem1:", 5):
        with pytest.raises(ValidationError, match="cursor"):
            mem_store.list(cursor=bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        mem_store.list(limit=0)


def test_compaction_keeps_everything_consistent(mem_store: InMemoryVectorStore) -> None:
    mem_store.upsert([rec(i, memory=f"word{i % 7}") for i in range(3000)])
    first = mem_store.list(limit=100)
    mem_store.delete([f"id-{i:05d}" for i in range(0, 3000) if i % 6])  # 2500 deleted
    survivors = [f"id-{i:05d}" for i in range(0, 3000, 6)]
    assert mem_store.count() == 500
    assert all_ids(mem_store, limit=64) == survivors
    following = mem_store.list(limit=1000, cursor=first.next_cursor)
    assert [r.id for r in following.records] == [s for s in survivors if s >= "id-00100"]
    assert mem_store.search(vec(600), top_k=1)[0].id == "id-00600"
    assert mem_store.get(["id-00600"], with_vectors=True)[0].vector == pytest.approx(vec(600))
    assert {h.id for h in mem_store.keyword_search("word5", top_k=1000)} == {
        s for s in survivors if int(s[3:]) % 7 == 5
    }
    mem_store.upsert([rec(5000)])
    assert all_ids(mem_store, limit=1000)[-1] == "id-05000"


# -- keyword search -----------------------------------------------------------------------

DOCS = {
    "d1": "The cat sat on the mat",
    "d2": "Dogs and cats are friends; the dog sleeps",
    "d3": "Quarterly budget meeting notes",
    "d4": "我喜欢在东京吃拉面",
    "d5": "The the the the the cat",
}


def _bm25_reference(query: str, docs: dict[str, str], k1: float = 1.2, b: float = 0.75) -> dict:
    tokens = {k: tokenize(v) for k, v in docs.items()}
    n, avgdl = len(docs), sum(len(t) for t in tokens.values()) / len(docs)
    scores: Counter[str] = Counter()
    for term in set(tokenize(query)):
        df = sum(term in t for t in tokens.values())
        if not df:
            continue
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for key, toks in tokens.items():
            tf = toks.count(term)
            if tf:
                scores[key] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(toks) / avgdl))
    return dict(scores)


def test_tokenizer() -> None:
    assert tokenize("Hello, WORLD! it's 2024_x") == ["hello", "world", "it", "s", "2024", "x"]
    assert tokenize("我爱东京 ok") == ["我", "爱", "东", "京", "ok"]
    assert tokenize("Straße") == ["strasse"]


@pytest.mark.parametrize("query", ["cat", "the cat", "dog budget", "东京", "CAT mat xyz"])
def test_keyword_search_is_bm25(mem_store: InMemoryVectorStore, query: str) -> None:
    mem_store.upsert(
        [VectorRecord(k, vec(k), {"memory": t, "u": k[-1]}) for k, t in DOCS.items()]
        + [VectorRecord("no-text", vec(0), {"other": "cat"})]
    )
    expected = _bm25_reference(query, DOCS)
    hits = mem_store.keyword_search(query, top_k=10)
    assert {h.id: h.score for h in hits} == pytest.approx(expected)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(mem_store.keyword_search(query, top_k=1)) == min(1, len(expected))


def test_keyword_search_edge_cases(mem_store: InMemoryVectorStore) -> None:
    assert mem_store.keyword_search("anything") == []
    mem_store.upsert([VectorRecord(k, vec(k), {"memory": t}) for k, t in DOCS.items()])
    assert mem_store.keyword_search("") == [] and mem_store.keyword_search("?!") == []
    assert mem_store.keyword_search("zeppelin") == []
    assert [h.id for h in mem_store.keyword_search("budget")] == ["d3"]
    mem_store.delete(["d3"])
    assert mem_store.keyword_search("budget") == []
    with pytest.raises(ValidationError):
        mem_store.keyword_search(["cat"])  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        mem_store.keyword_search("cat", top_k=0)


# -- persistence --------------------------------------------------------------------------


def test_persistence_round_trip(backend: str, tmp_path: Path) -> None:
    path = tmp_path / "data" / "store"  # created on demand
    store = InMemoryVectorStore({"path": str(path)})
    assert store.capabilities.persistent
    store.ensure_collection("a", DIMS, "euclidean")
    store.upsert([rec(i, memory=f"persisted 東京 {i}", q='say "hi" \\') for i in range(20)])
    store.delete(["id-00003"])
    store.update("id-00004", payload={"memory": "changed"})
    store.ensure_collection("b", 3, "dot")
    store.upsert([VectorRecord("b1", [1.0, 2.0, 3.0], {"x": [1, {"y": None}]})])
    store.close()
    assert sorted(p.name for p in path.iterdir()) == ["a.json", "b.json"]
    doc = json.loads((path / "a.json").read_text(encoding="utf-8"))
    assert doc["format"] == _collection.FILE_FORMAT and doc["metric"] == "euclidean"
    assert len(doc["ids"]) == 19

    again = InMemoryVectorStore({"path": str(path)})
    again.ensure_collection("a", DIMS, "euclidean")
    assert again.count() == 19
    assert all_ids(again) == [f"id-{i:05d}" for i in range(20) if i != 3]
    got = again.get(["id-00005", "id-00004"], with_vectors=True)
    assert got[0].payload == {"i": 5, "memory": "persisted 東京 5", "q": 'say "hi" \\'}
    assert got[0].vector == vec(5)  # float64 round trip is exact
    assert got[1].payload == {"memory": "changed"}
    assert again.search(vec(7), top_k=1)[0].id == "id-00007"
    assert [h.id for h in again.keyword_search("changed")] == ["id-00004"]
    with pytest.raises(VectorStoreError):
        again.ensure_collection("b", 4, "dot")
    again.ensure_collection("b", 3, "dot")
    assert again.get(["b1"])[0].payload == {"x": [1, {"y": None}]}
    again.drop_collection()
    assert sorted(p.name for p in path.iterdir()) == ["a.json"]
    again.close()


def test_every_write_is_saved_without_close(backend: str, tmp_path: Path) -> None:
    store = InMemoryVectorStore({"path": str(tmp_path)})
    store.ensure_collection("c", DIMS)
    store.upsert([rec(1), rec(2)])
    reader = InMemoryVectorStore({"path": str(tmp_path)})
    reader.ensure_collection("c", DIMS)
    assert reader.count() == 2
    store.delete(["id-00001"])
    assert len(json.loads((tmp_path / "c.json").read_text())["ids"]) == 1


def test_vector_block_is_portable_between_backends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = InMemoryVectorStore({"path": str(tmp_path)})
    store.ensure_collection("c", DIMS)
    store.upsert([rec(i) for i in range(5)])
    store.close()
    monkeypatch.setattr(_vectors, "np", None)
    reader = InMemoryVectorStore({"path": str(tmp_path)})
    reader.ensure_collection("c", DIMS)
    assert reader.get(["id-00004"], with_vectors=True)[0].vector == vec(4)


@pytest.mark.parametrize(
    "content",
    ["not json", "[]", '{"format": "other"}', '{"format": "memoweave-memory-store/1"}',
     '{"format": "memoweave-memory-store/1", "dims": 8, "metric": "cosine", "ids": ["a"],'
     ' "payloads": [{}], "vectors": "AAAA"}'],
)  # fmt: skip
def test_corrupt_file_raises(tmp_path: Path, content: str) -> None:
    (tmp_path / "c.json").write_text(content)
    with pytest.raises(VectorStoreError, match=r"c\.json"):
        InMemoryVectorStore({"path": str(tmp_path)}).ensure_collection("c", DIMS)


def test_failed_save_restores_last_saved_state(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = InMemoryVectorStore({"path": str(tmp_path)})
    store.ensure_collection("c", DIMS)
    store.upsert([rec(1)])

    def disk_full(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_collection.os, "replace", disk_full)
    with pytest.raises(VectorStoreError, match="No space left"):
        store.upsert([rec(2)])
    with pytest.raises(VectorStoreError):
        store.delete(["id-00001"])
    assert store.count() == 1 and store.get(["id-00001"])[0].payload == {"i": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]  # no temp file left behind
    monkeypatch.undo()
    store.upsert([rec(2)])
    assert store.count() == 2


def test_unusable_path_raises_typed_errors(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(VectorStoreError, match="not a directory"):
        InMemoryVectorStore({"path": str(blocker)}).ensure_collection("c", DIMS)
    with pytest.raises(VectorStoreError, match="cannot read"):
        InMemoryVectorStore({"path": str(blocker / "sub")}).ensure_collection("c", DIMS)
    with pytest.raises(ConfigError, match="path"):
        InMemoryVectorStore({"path": 5})


# -- concurrency --------------------------------------------------------------------------


def test_concurrent_writers_and_readers(mem_store: InMemoryVectorStore) -> None:
    errors: list[BaseException] = []

    def writer(start: int) -> None:
        try:
            for i in range(start, start + 200):
                mem_store.upsert([rec(i)])
                if i % 10 == 0:
                    assert mem_store.search(vec(i), top_k=1)[0].id == f"id-{i:05d}"
                if i % 5 == 0:
                    mem_store.delete([f"id-{i:05d}"])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k * 1000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert mem_store.count() == 4 * 160
    assert len(all_ids(mem_store, limit=100)) == 640
